"""run_pytest.py - runs the Python package's pytest files for meson test.

Usage: run_pytest.py any|corpus CORPUS_DIR TEST_FILE...
Exit 77 (SKIP) with the reason when pytest is not installed
(apt-get install python3-pytest) or, for the part 'corpus', when
CORPUS_DIR does not exist (the sentence of tests/tc_corpus.py).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tc_corpus  # noqa: E402


def main():
    part, corpus, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        import pytest
    except ImportError:
        print("run_pytest.py: skipped: pytest is not installed for %s "
              "(apt-get install python3-pytest)" % sys.executable)
        return tc_corpus.SKIP
    if part == "corpus":
        tc_corpus.need("run_pytest.py", "the Python package's real-file tests", corpus)
    os.environ["NBG_CORPUS_DIR"] = corpus
    # no cache directory in the source tree; verbose enough to name each test
    return pytest.main(["-p", "no:cacheprovider", "-q", "-rs"] + files)


if __name__ == "__main__":
    sys.exit(main())
