# make demo / make test install everything they need on Debian 12 (as root).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
APT_PACKAGES := dpdk dpdk-dev netsniff-ng iproute2 procps util-linux ethtool openssh-server openssh-client openvswitch-switch python3-apt influxdb victoria-metrics chromium fonts-liberation python3-venv python3-pip \
	liblua5.3-0 libedit2 libncurses6 libpcap0.8 libnuma1 libfdt1 libbsd0 \
	qemu-system-x86 libvirt-daemon-system libvirt-clients libvirt-dev pkg-config gcc busybox-static cpio kmod nftables openvswitch-switch-dpdk qemu-utils genisoimage \
	libzmq5 libpcap-dev libffi-dev libjson-c5 libcivetweb1 \
	containerd runc containernetworking-plugins etcd-server etcd-client socat conntrack stress-ng
DEMO_ARGS ?= {"duration_s": 2}
# TRex (not in Debian or PyPI): NSB_TREX_PATH, NSB's /opt/nsb_bin/trex/scripts, or the
# copy beside the checkout that tests use; empty when none (the demo then uses trafgen)
TREX_PATH ?= $(firstword $(NSB_TREX_PATH) $(wildcard /opt/nsb_bin/trex/scripts) $(abspath $(wildcard ../shared/tools/trex)))

.PHONY: all deps trex-runtime venv test test-slow unit functional lint demo genconfig docs bench bench-accuracy guest-image clean k8s k8s-build k8s-down

all: test

deps:
	@if ! dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then \
		echo "installing $(APT_PACKAGES)"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(APT_PACKAGES); \
	fi

# A TRex install whose scripts dir lacks libbpf-64.so (its capture-filter library)
# does not start; tools/trex/libbpf-64.c provides it on libpcap, in /usr/local/lib
trex-runtime: deps
	@if [ -n "$(TREX_PATH)" ] && [ -x "$(TREX_PATH)/_t-rex-64" ] && \
		LD_LIBRARY_PATH="$(TREX_PATH)" ldd "$(TREX_PATH)/_t-rex-64" | grep -q "libbpf-64.so => not found"; then \
		echo "building libbpf-64.so for $(TREX_PATH)"; \
		gcc -O2 -shared -fPIC -Wall -o /usr/local/lib/libbpf-64.so tools/trex/libbpf-64.c -lpcap -lffi && ldconfig; \
	fi

$(BIN)/nsb: setup.cfg pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip setuptools wheel
	$(BIN)/pip install -q -e '.[test,libvirt,kubernetes,docs]'
	@touch $@

# Grafana's published dashboard types, turned into a JSON schema by the dashboard tests
NPM_TOOLS := $(VENV)/npm
GRAFANA_SCHEMA := $(NPM_TOOLS)/node_modules/@grafana/schema/package.json

$(GRAFANA_SCHEMA):
	@command -v node >/dev/null && command -v npm >/dev/null || { apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm; }
	npm install --prefix $(NPM_TOOLS) --no-save --no-audit --no-fund --loglevel=error \
		@grafana/schema@11.6.9 ts-json-schema-generator@2.3.0

venv: $(BIN)/nsb $(GRAFANA_SCHEMA)

lint: venv
	$(BIN)/ruff check nsb tests benchmarks tools

# no apt, no npm, no root: only the virtualenv (which needs PyPI once, when it is made)
unit: $(BIN)/nsb
	$(BIN)/pytest -q tests/unit

functional: deps trex-runtime venv
	NSB_TREX_PATH="$(TREX_PATH)" $(BIN)/pytest -q tests/functional

# The single-node Kubernetes cluster's build (the first time on a machine, 15-25 minutes
# on two cores) runs beside the installs, the unit tests and the functional tests that
# measure no rates (BESIDE_BUILD), and is waited for before the other functional tests:
# a compiler on the same two cores disturbs the rates they measure. The cluster's tests
# come last.
BESIDE_BUILD = $(addprefix tests/functional/,test_ansible.py test_ansible_tools.py test_docs_site.py \
	test_grafana_api.py test_grafana_schema.py test_influxdb_output.py test_trend_influx.py \
	test_third_party_plugin.py test_ssh_executor.py test_report_browser.py)
test: deps
	@mkdir -p $(dir $(K8S_BUILD_LOG)); setsid tools/k8s/build.sh > $(K8S_BUILD_LOG) 2>&1 & \
	build=$$!; \
	$(MAKE) --no-print-directory trex-runtime venv lint || { kill -- -$$build; exit 1; }; \
	NSB_TREX_PATH="$(TREX_PATH)" $(BIN)/pytest -v -rs -m "not slow and not k8s" tests/unit; rc=$$?; \
	NSB_TREX_PATH="$(TREX_PATH)" $(BIN)/pytest -v -rs -m "not slow and not k8s" \
		$(BESIDE_BUILD) || rc=1; \
	echo "waiting for the cluster's build to end ($(K8S_BUILD_LOG))"; \
	if wait $$build; then built=1; else built=0; fi; \
	NSB_TREX_PATH="$(TREX_PATH)" $(BIN)/pytest -v -rs --durations=40 -m "not slow and not k8s" \
		$(addprefix --ignore=,$(BESIDE_BUILD)) tests/functional || rc=1; \
	if [ $$built = 1 ]; then \
		NSB_TREX_PATH="$(TREX_PATH)" NSB_PYTHON=$(abspath $(BIN)/python) $(BIN)/pytest -v -rs -m "k8s and not slow" tests || rc=1; \
	else echo "building the cluster failed: $(K8S_BUILD_LOG)"; tail -20 $(K8S_BUILD_LOG); rc=1; fi; \
	exit $$rc

# A real single-node Kubernetes (v1.34) in private namespaces of this machine: built once
# from the Go module proxy into $(K8S_HOME), started with its kubeconfig's path printed;
# k8s-down stops it and leaves the host as it was
K8S_HOME ?= $(or $(NSB_K8S_HOME),/var/cache/nsb/k8s)
K8S_BUILD_LOG ?= $(K8S_HOME)/build.log
k8s-build: deps
	tools/k8s/build.sh

k8s: k8s-build venv
	@NSB_PYTHON=$(abspath $(BIN)/python) tools/k8s/up.sh

k8s-down:
	tools/k8s/down.sh

# the hardware-like pod's long variants (vfio-pci behind a virtual IOMMU, ...)
test-slow: deps trex-runtime venv
	NSB_TREX_PATH="$(TREX_PATH)" $(BIN)/pytest -v -rs -m slow tests

demo: deps trex-runtime venv
	NSB_TREX_PATH="$(TREX_PATH)" $(BIN)/nsb task start samples/tc_testpmd_netns_rfc2544.yaml --task-args '$(DEMO_ARGS)'

# the libvirt context's guest image (kernel + initramfs from this host's files), built
# once into /var/cache/nsb/guest (NSB_GUEST_CACHE); runs also build it when missing
guest-image: deps venv
	$(BIN)/python -c 'from nsb.contexts import guest_image; print(guest_image.ensure())'

# the site (mkdocs.yml, docs/): static HTML in build/site, with a search box; a broken
# link or anchor, or a page left out of the navigation, fails it (strict)
docs: $(BIN)/nsb
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "site: build/site/index.html"

genconfig: venv
	$(BIN)/oslo-config-generator --config-file etc/nsb/nsb-config-generator.conf

bench: deps trex-runtime venv
	NSB_TREX_PATH="$(TREX_PATH)" $(BIN)/python benchmarks/bench_trex.py
	$(BIN)/python benchmarks/bench_cli_startup.py
	$(BIN)/python benchmarks/bench_trial_overhead.py
	$(BIN)/python benchmarks/bench_prox_control.py
	$(BIN)/python benchmarks/bench_hostile_input.py
	$(BIN)/python benchmarks/bench_compare.py --pairs 200
	$(BIN)/python benchmarks/bench_trend.py
	$(BIN)/python benchmarks/search/run_search_benchmark.py --seeds 200

# the README's accuracy table: reported rates and counts against the DUT's own counters,
# TRex's latency floor; --pod adds PROX on the hardware-like pod's PCI NICs (boots two VMs)
bench-accuracy: deps trex-runtime venv
	NSB_TREX_PATH="$(TREX_PATH)" $(BIN)/python benchmarks/bench_accuracy.py $(ACCURACY_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
