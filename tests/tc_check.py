"""The checks of the corpus scripts (check_network.py, check_dataflow.py,
check_weights_v2.py): each prints `ok` or `FAIL` and what it checked;
failures are counted, and `finish()` prints the count and gives the exit
status."""

failed = 0


def check(ok, what):
    global failed
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failed += 1
    return ok


def finish():
    print("%d failed" % failed)
    return 1 if failed else 0
