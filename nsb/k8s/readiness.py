"""Waiting for a run's pods to be Ready, and one line saying why one cannot start:
its container's waiting reason (the image is not on the node, it crashed), the
scheduler's (no node has the hugepages it asks for), the node's (its network could not
be attached) from the pod's events."""

from __future__ import annotations

import time

from nsb.errors import PrerequisiteError

# a container waiting for one of these will not start by waiting longer
FATAL_WAITING = {"ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName",
                 "CreateContainerConfigError", "CreateContainerError", "CrashLoopBackOff",
                 "RunContainerError"}
FATAL_EVENTS = {"FailedCreatePodSandBox", "FailedMount", "FailedScheduling", "OutOfhugepages-2Mi",
                "OutOfhugepages-1Gi", "OutOfcpu", "OutOfmemory", "UnexpectedAdmissionError"}
HINTS = {
    "ErrImageNeverPull": "the image is not on the node (nsb's 'images' option builds and "
                         "imports one; with a registry, push it there and set imagePullPolicy)",
    "ErrImagePull": "the node cannot pull the image",
    "ImagePullBackOff": "the node cannot pull the image",
    "FailedScheduling": "no node can take the pod",
    "FailedCreatePodSandBox": "the node could not set up the pod's sandbox or networks",
}


def pod_problem(pod, events: list) -> str:
    """Why ``pod`` cannot start, or '' while it may still come up."""
    status = pod.status
    if status.phase in ("Failed", "Succeeded"):
        return f"it ended ({status.phase}): {status.reason or ''} {status.message or ''}".strip()
    for container in status.container_statuses or []:
        waiting = container.state.waiting if container.state else None
        if waiting and waiting.reason in FATAL_WAITING:
            hint = HINTS.get(waiting.reason, "")
            return (f"container {container.name}: {waiting.reason}: {waiting.message or ''}"
                    + (f" ({hint})" if hint else "")).strip()
        terminated = container.state.terminated if container.state else None
        if terminated and pod.spec.restart_policy == "Never":
            return (f"container {container.name} exited with {terminated.exit_code}: "
                    f"{terminated.reason or ''} {terminated.message or ''}").strip()
    for condition in status.conditions or []:
        if condition.type == "PodScheduled" and condition.status == "False" \
                and condition.reason == "Unschedulable":
            return f"unschedulable: {condition.message}"
    for event in events:
        if event.type == "Warning" and event.reason in FATAL_EVENTS:
            hint = HINTS.get(event.reason, "")
            message = " ".join((event.message or "").split())
            return f"{event.reason}: {message[:400]}" + (f" ({hint})" if hint else "")
    return ""


def is_ready(pod) -> bool:
    return pod.status.phase == "Running" and all(
        c.ready for c in pod.status.container_statuses or [])


def wait_ready(core, namespace: str, names: list[str], timeout_s: float) -> dict:
    """The pods by name once all are Ready; a PrerequisiteError naming the first that
    cannot start (or is not Ready by ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while True:
        pods = {p.metadata.name: p for p in core.list_namespaced_pod(namespace).items}
        for name in names:
            pod = pods.get(name)
            if pod is None or is_ready(pod):
                continue
            events = core.list_namespaced_event(
                namespace, field_selector=f"involvedObject.name={name}").items
            problem = pod_problem(pod, events)
            if problem:
                raise PrerequisiteError(f"pod {name} cannot start: {problem}")
        if all(name in pods and is_ready(pods[name]) for name in names):
            return pods
        if time.monotonic() > deadline:
            waiting = [n for n in names if n not in pods or not is_ready(pods[n])]
            phases = ", ".join(f"{n} ({pods[n].status.phase if n in pods else 'missing'})"
                               for n in waiting)
            raise PrerequisiteError(f"pods not Ready after {timeout_s:g} s: {phases}")
        time.sleep(0.5)
