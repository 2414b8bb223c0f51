"""python3 -m nbgkit FILE...: the report `nbg inspect FILE` prints, and its exit code."""

import sys

import nbgkit


def _print_error(path: str, e: "nbgkit.Error") -> None:
    # as nbg prints a failure: read errors alone, file errors with the code,
    # offset and field
    if isinstance(e, nbgkit.ReadError):
        print("nbg: %s" % e.message, file=sys.stderr)
    else:
        print("nbg: %s: %s at offset %d (0x%x), field %s: %s" % (
            path, e.code, e.offset, e.offset, e.field or "-", e.message), file=sys.stderr)


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print("usage: python3 -m nbgkit FILE...\n"
              "Prints the report `nbg inspect FILE` prints for each FILE.",
              file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    worst = printed = 0
    for path in args:
        try:
            m = nbgkit.open(path)
        except nbgkit.Error as e:
            _print_error(path, e)
            if e.code in ("section-checksum-mismatch", "file-checksum-mismatch",
                          "v1-crc-sum-mismatch"):
                # as nbg inspect: the failure, then what can still be decoded
                m = nbgkit.open(path, strict=False)
            else:
                worst = max(worst, e.exit_code)
                continue
            worst = max(worst, e.exit_code)
        with m:
            if printed:
                sys.stdout.write("\n")
            printed += 1
            sys.stdout.write(m.report())
    sys.stdout.flush()
    return worst


if __name__ == "__main__":
    sys.exit(main())
