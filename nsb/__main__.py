from nsb.cli import main

raise SystemExit(main())
