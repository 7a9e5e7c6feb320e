"""Plans made without lengths, remembered. Such a plan is a pure function of its arguments and of
the spec of the device it is made for, so each shape is planned once and later calls get the
same knobs with a fresh workspace of their shape (`plan_on_device`): calls without `plan=`
(which plan each time), the torch ops, and the default kv_pack's twins. A workspace is never
shared between plans, so streams and graphs never race on one. Plans made with lengths are
not remembered (a serving step's lengths are new each step).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import replace

from splitkv.device import DeviceSpec, resolve_device

MAX_REMEMBERED = 256  # shapes: past this the oldest is forgotten (each a few hundred bytes)
_RESOLVED = ("device", "device_spec")  # keyed as resolved: None is the current device's


def remember_lengthless_plans(plan_decode: Callable, plan_on_device: Callable) -> Callable:
    """`plan_decode` remembering its plans without lengths (see the module docstring); the
    returned function's `forget()` clears what it remembers."""
    plans: dict = {}
    forgetting = threading.Lock()  # engines may plan from several threads; lookups need none

    @functools.wraps(plan_decode)
    def plan(*args, **kwargs):
        if kwargs.get("seq_lens") is not None:
            return plan_decode(*args, **kwargs)
        try:
            device = resolve_device(kwargs.get("device"))
            spec = kwargs.get("device_spec")
            if spec is None and device.type != "meta":  # "meta" needs one: plan_decode says so
                spec = DeviceSpec.from_torch(device)
            # Each value with its type: 8.0 and True equal 8 and 1, but the checks refuse them.
            given = sorted((k, type(v), v) for k, v in kwargs.items() if k not in _RESOLVED)
            key = (tuple((type(a), a) for a in args), device, spec, tuple(given))
            known = plans.get(key)
        except (TypeError, ValueError, RuntimeError):
            # An unhashable or bad argument: plan_decode's own checks name it.
            return plan_decode(*args, **kwargs)
        if known is not None:
            return plan_on_device(known, device)
        made = plan_decode(*args, **kwargs)
        # Knobs only, no device memory kept (a "meta" plan, as the default kv_pack's twins,
        # holds none already).
        knobs = made if made.device.type == "meta" else replace(made, workspace=None)
        with forgetting:
            if len(plans) >= MAX_REMEMBERED:
                del plans[next(iter(plans))]  # the oldest
            plans[key] = knobs
        return made

    def forget() -> None:
        with forgetting:
            plans.clear()

    plan.forget = forget
    return plan
