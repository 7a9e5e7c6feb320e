"""A pytest plugin for device runs cut off by their time limit: each failed test's name and the
last lines of its report go to $OUT/logs/failures.txt as it fails, not in the end summary
(`-p report_failures`, with this folder on PYTHONPATH; with xdist the controller writes)."""

import os


def pytest_runtest_logreport(report):
    if report.failed and not os.environ.get("PYTEST_XDIST_WORKER"):
        tail = "\n".join(str(report.longrepr).splitlines()[-6:])
        path = os.path.join(os.environ.get("OUT", "."), "logs", "failures.txt")
        with open(path, "a") as log:
            log.write(f"FAILED {report.nodeid} ({report.when})\n{tail}\n\n")
