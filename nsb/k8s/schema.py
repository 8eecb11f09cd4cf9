"""The kubernetes context's options: Yardstick's Kubernetes context (``servers`` with
their containers, ``networks`` with their plugin) and nsb's additions (each server's
``role`` and data ``interfaces``, ``links``, ``images`` to build, the kubeconfig)."""

from __future__ import annotations

from nsb.contexts import topology

_STR_OR_LIST = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
_RESOURCES = {"type": "object", "properties": {
    "requests": {"type": "object"}, "limits": {"type": "object"}}}
_VOLUME_MOUNT = {"type": "object", "required": ["name", "mountPath"],
                 "properties": {"name": {"type": "string"}, "mountPath": {"type": "string"},
                                "readOnly": {"type": "boolean"}}}
CONTAINER = {
    "type": "object",
    "description": "a container, with Yardstick's keys (others are ignored, as there)",
    "properties": {
        "image": {"type": "string", "minLength": 1},
        "command": _STR_OR_LIST, "args": _STR_OR_LIST,
        "env": {"type": "array", "items": {"type": "object", "required": ["name"]}},
        "resources": _RESOURCES,
        "volumeMounts": {"type": "array", "items": _VOLUME_MOUNT},
        "securityContext": {"type": "object"},
        "ports": {"type": "array", "items": {"type": "object", "required": ["containerPort"]}},
        "imagePullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
        "tty": {"type": "boolean"}, "stdin": {"type": "boolean"},
    },
}
_INTERFACE = {**topology.INTERFACE_SCHEMA, "properties": {
    **topology.INTERFACE_SCHEMA["properties"],
    "type": {"description": "memif: a socket on a directory the pod shares with the other "
                            "end (a pod, or a generator on the node); vhostuser: a socket "
                            "the pod serves (virtio_user) and the node's vSwitch connects "
                            "to (link it via the bridge; the pod needs hugepages in its "
                            "resources); veth: a kernel interface of a Multus network "
                            "(af_packet for DPDK programs)",
             "enum": ["memif", "vhostuser", "veth"]},
    "network": {"description": "the Multus network (context 'networks' or an existing "
                               "NetworkAttachmentDefinition) this kernel interface is on; "
                               "default: a bridge of its own per link",
                "type": "string"},
}}
SERVER = {
    "type": "object",
    "description": "a pod: Yardstick's server keys (a container's keys, or 'containers'), "
                   "nsb's role and interfaces",
    "properties": {
        **CONTAINER["properties"],
        "role": {"type": "string"},
        "interfaces": {"type": "object", "propertyNames": {"pattern": "^[A-Za-z][A-Za-z0-9_]*$",
                                                           "maxLength": 15},
                       "additionalProperties": {"anyOf": [_INTERFACE, {"type": "null"}]}},
        "containers": {"type": "array", "minItems": 1, "items": CONTAINER},
        "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}},
        "volumes": {"type": "array", "items": {"type": "object", "required": ["name"],
                                               "minProperties": 2}},
        "securityContext": {"type": "object"},
        "networks": {"type": "array", "items": {"type": "string"}},
        "tolerations": {"type": "array", "items": {"type": "object"}},
        "restartPolicy": {"enum": ["Always", "OnFailure", "Never"]},
        "node_ports": {"type": "array", "items": {
            "type": "object", "required": ["name", "port"],
            "properties": {"name": {"type": "string",
                                    "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
                           "port": {"type": "integer", "minimum": 1, "maximum": 65535}}}},
    },
}
OPTIONS = {
    "type": "object",
    "required": ["servers"],
    "additionalProperties": False,
    "properties": {
        "name": {"description": "the context's name (pods are <server>-<name>)",
                 "type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
        "kubeconfig": {"description": "the cluster's kubeconfig (default: KUBECONFIG, "
                                      "~/.kube/config, then make k8s's cluster)",
                       "type": "string"},
        "k8s_context": {"description": "the kubeconfig context (default: its current one)",
                        "type": "string"},
        "servers": {"description": "the pods by server name",
                    "type": "object", "minProperties": 1,
                    "propertyNames": {"pattern": "^[A-Za-z0-9][A-Za-z0-9_]*$"},
                    "additionalProperties": SERVER},
        "networks": {"description": "Multus networks by name: nsb's {config: <CNI config>} "
                                    "or Yardstick's {plugin, args}",
                     "type": "object", "additionalProperties": {
                         "type": "object", "anyOf": [{"required": ["config"]},
                                                     {"required": ["plugin", "args"]}]}},
        "links": topology.LINKS_SCHEMA,
        "images": {"description": "images nsb builds from this machine's files and imports "
                                  "into the node's containerd (no registry needed): name -> "
                                  "{programs: [names on PATH or paths]}",
                   "type": "object", "additionalProperties": {
                       "type": "object", "required": ["programs"],
                       "additionalProperties": False,
                       "properties": {"programs": {"type": "array", "minItems": 1,
                                                   "items": {"type": "string"}}}}},
        "containerd_socket": {"description": "the node's containerd socket images are "
                                             "imported through (default: make k8s's)",
                              "type": "string"},
        "ready_timeout_s": {"description": "how long pods may take to be Ready",
                            "type": "number", "exclusiveMinimum": 0, "default": 180},
        "flags": {"description": "Yardstick's no_setup/no_teardown (accepted; nsb always "
                                 "makes and removes its own namespace)", "type": "object"},
        "nfvi_type": {"description": "NSB's NFVi collector type", "type": "string"},
    },
}
