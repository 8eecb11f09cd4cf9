"""A binary search over any ordered value (a rate, an address count): the bounds first,
then halving the interval between the highest value that passed and the lowest that
failed. Its trials are the caller's, so it serves every profile that searches by
verdicts alone (RFC 2889's counts and rates, a neighbour's NDR)."""

from __future__ import annotations

from nsb.traffic_profiles.judges import GENERATOR_LIMITED, PASS


def search(trial_at, low, high, close_enough, middle, should_stop):
    """A binary search: the upper bound, then the lower, then halving the interval
    between the highest value that passed and the lowest that failed until
    ``close_enough``. Returns ((value, Measurement) that passed or None, the lowest
    value that failed or None, the generator-limited Measurement that ended it or
    None)."""
    passed = failed = None
    for value in (high, low):
        done = trial_at(value)
        if done.verdict == GENERATOR_LIMITED:
            return None, failed, done
        if done.verdict == PASS:
            passed = (value, done)
            break
        failed = value
    if passed is None:
        return None, failed, None
    while failed is not None and not close_enough(passed[0], failed) and not should_stop():
        value = middle(passed[0], failed)
        done = trial_at(value)
        if done.verdict == GENERATOR_LIMITED:
            return passed, failed, done
        if done.verdict == PASS:
            passed = (value, done)
        else:
            failed = value
    return passed, failed, None
