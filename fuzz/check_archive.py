#!/usr/bin/env python3
"""fuzz/check_archive.py REPLAY SOURCE_DIR [ARCHIVE...] - the replay driver's
archive reader (fuzz/archive.c) against archives written by Python's tarfile,
an independent writer.

- An archive of every file of SOURCE_DIR/fuzz/regressions (directories
  included), gzip-compressed and plain: the driver runs exactly the regular
  members tarfile wrote.
- Damaged copies of it: each must fail with exit status 3 and a message
  naming the byte offset that the damage is at, computed here from the
  ustar layout (a wrong header checksum, a size over 1 MiB, a symbolic link,
  a GNU header, a name with a control byte, truncation inside a member and
  before the end-of-archive block, a nonzero byte after it, a corrupt gzip
  CRC, a missing file).
- Each ARCHIVE (the committed corpora, fuzz/corpus/HARNESS.tar.gz): the
  driver runs as many inputs as tarfile lists, and the archive is what
  fuzz/run.sh's pack writes: POSIX ustar, names sorted, date 0, owner 0,
  mode 0644, no name or date in the gzip header.
"""
import gzip
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile

replay, source = sys.argv[1], sys.argv[2]
# In a cross build the driver runs under the cross file's exe wrapper.
sys.path.insert(0, os.path.join(source, 'tests'))
from exe_wrapper import command  # noqa: E402
failures = []


def check(what, ok, detail=''):
    if not ok:
        failures.append('%s: %s' % (what, detail))


def run(path):
    p = subprocess.run(command(replay) + [path], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def regular_members(data):
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        return [m for m in t.getmembers() if m.isfile()]


def fix_checksum(block):
    b = bytearray(block)
    b[148:156] = b' ' * 8
    b[148:156] = b'%06o\0 ' % sum(b)
    return bytes(b)


def header_offsets(tar):
    """The offset of every header of an uncompressed ustar archive."""
    offs, at = [], 0
    while at + 512 <= len(tar) and any(tar[at:at + 512]):
        offs.append(at)
        size = int(tar[at + 124:at + 136].rstrip(b'\0 ') or b'0', 8)
        at += 512 + (size + 511) // 512 * 512
    return offs, at


def expect_refusal(name, data, offset, word=None):
    global refused
    refused += 1
    with tempfile.NamedTemporaryFile(suffix=name, dir=tmp, delete=False) as f:
        f.write(data)
    rc, _, err = run(f.name)
    check(name, rc == 3, 'exit status %d, expected 3 (%s)' % (rc, err.strip()))
    if offset is not None:
        check(name, 'byte %d of the decompressed archive' % offset in err,
              'the message does not name byte %d: %s' % (offset, err.strip()))
    if word:
        check(name, word in err, 'the message does not say %r: %s' % (word, err.strip()))


tmpdir = tempfile.TemporaryDirectory()
tmp = tmpdir.name
refused = 0
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode='w', format=tarfile.USTAR_FORMAT) as t:
    t.add(os.path.join(source, 'fuzz', 'regressions'), arcname='regressions')
tar = buf.getvalue()
want = len(regular_members(tar))
check('regressions archive', want >= 2, 'only %d regular members' % want)
for name, data in (('good.tar', tar), ('good.tar.gz', gzip.compress(tar))):
    path = os.path.join(tmp, name)
    open(path, 'wb').write(data)
    rc, out, err = run(path)
    check(name, rc == 0, 'exit status %d: %s' % (rc, err.strip()))
    check(name, '%s: %d inputs' % (path, want) in out,
          'tarfile wrote %d regular members; the driver said: %s' % (want, out.strip()))

offs, end = header_offsets(tar)
first_file = next(o for o in offs if tar[o + 156:o + 157] in (b'0', b'\0'))
h = tar[first_file:first_file + 512]
size = int(h[124:136].rstrip(b'\0 '), 8)


def with_header(block):
    return tar[:first_file] + block + tar[first_file + 512:]


expect_refusal('-checksum.tar', with_header(b'X' + h[1:]), first_file + 148)
expect_refusal('-size.tar', with_header(fix_checksum(h[:124] + b'%011o\0' % (1 << 20 | 1) +
                                                       h[136:])), first_file + 124)
expect_refusal('-octal.tar', with_header(fix_checksum(h[:124] + b'0000000x000\0' + h[136:])),
               first_file + 124)
expect_refusal('-symlink.tar', with_header(fix_checksum(h[:156] + b'2' + h[157:])),
               first_file + 156)
expect_refusal('-gnu.tar', with_header(fix_checksum(h[:257] + b'ustar  \0' + h[265:])),
               first_file + 257)
expect_refusal('-name.tar', with_header(fix_checksum(b'\x1b' + h[1:])), first_file)
cut = first_file + 512 + size // 2 + 1
expect_refusal('-cut.tar', tar[:cut], cut, 'truncated')
expect_refusal('-cut.tar.gz', gzip.compress(tar[:cut]), cut, 'truncated')
expect_refusal('-noend.tar', tar[:end], end, 'end-of-archive')
expect_refusal('-tail.tar', tar + b'\1', len(tar), 'after the end-of-archive')
z = bytearray(gzip.compress(tar))
z[-8] ^= 1  # the CRC-32 of the gzip trailer
expect_refusal('-crc.tar.gz', bytes(z), None, 'zlib')
rc, _, err = run(os.path.join(tmp, 'absent.tar.gz'))
check('absent.tar.gz', rc == 3, 'exit status %d: %s' % (rc, err.strip()))
refused += 1

for archive in sys.argv[3:]:
    raw = open(archive, 'rb').read()
    check(archive, raw[:2] == b'\x1f\x8b' and raw[4:8] == b'\0\0\0\0' and not raw[3] & 0x08,
          'not gzip -n (a date or a name in the gzip header)')
    data = gzip.decompress(raw)
    members = regular_members(data)
    names = [m.name for m in members]
    check(archive, names == sorted(names), 'names not sorted')
    for m in members:
        if (m.mtime, m.uid, m.gid, m.mode, m.uname, m.gname) != (0, 0, 0, 0o644, '', ''):
            check(archive, False, '%s: date %d, owner %d:%d %r:%r, mode %o' % (
                m.name, m.mtime, m.uid, m.gid, m.uname, m.gname, m.mode))
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        for m in members:
            if m.name != hashlib.sha1(t.extractfile(m).read()).hexdigest():
                check(archive, False, '%s is not named by the SHA-1 of its bytes, as '
                      'libFuzzer names inputs' % m.name)
    rc, out, err = run(archive)
    check(archive, rc == 0 and '%s: %d inputs' % (archive, len(members)) in out,
          'tarfile lists %d members; the driver: exit %d, %s %s' % (
              len(members), rc, out.strip(), err.strip()))

for f in failures:
    print('FAIL', f)
print('archive reader: %d damaged archives, %d committed archives; %d checks failed' % (
    refused, len(sys.argv) - 3, len(failures)))
sys.exit(1 if failures else 0)
