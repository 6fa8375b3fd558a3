"""A fixture that measures nothing: every claim run on it must come out INCONCLUSIVE or ERROR."""


def workload(n):
    return None
