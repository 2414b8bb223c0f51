#!/usr/bin/env python3
"""The command-line help, checked against the code.

- every command answers `nbg CMD --help`, `nbg CMD -h` and `nbg help CMD`
  with exit 0 and its usage and every documented option on stdout;
- the top-level help lists every command and every option;
- the documented options (`nbg help --options`, from programs/cli_table.c)
  are parsed by the table's parser (cli_args.c), and no programs/cmd_*.c
  names an option the table does not document (a command parsing one by
  hand), and programs/*.c compare strings with strcmp at most 10 times
  (named choices go through cli_names.c's one lookup, as doc/architecture.md
  says; 37 before it);
- an unknown option, a typo, a missing value and a bad choice are refused
  with exit 2 and a sentence that names the option;
- doc/nbg.1 and completion/nbg are what `nbg help --man` and
  `nbg help --completion` print now (scripts/gen-docs.sh regenerates them);
- the man page renders with man(1) when it is installed.
Usage: check_cli_help.py NBG SOURCE_ROOT
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from exe_wrapper import command

nbg, root = command(sys.argv[1]), sys.argv[2]
bad = []


def run(*args):
    return subprocess.run([*nbg, *args], capture_output=True, text=True)


table = {}
for line in run('help', '--options').stdout.splitlines():
    cmd, opt = line.split()
    table.setdefault(cmd, set()).add(opt)
top = run('help')
if top.returncode != 0:
    bad.append('nbg help exits %d' % top.returncode)
commands = re.findall(r'^  ([a-z]+) ', top.stdout.split('\noptions:')[0], re.M)
if len(commands) < 10:
    bad.append('nbg help lists only %d commands' % len(commands))
for cmd in commands:
    for args in ([cmd, '--help'], [cmd, '-h'], ['help', cmd]):
        r = run(*args)
        if r.returncode != 0 or not r.stdout.startswith('usage: nbg ' + cmd):
            bad.append('nbg %s: exit %d, stdout %r' % (' '.join(args), r.returncode,
                                                        r.stdout[:60]))
            continue
        for opt in table.get(cmd, ()):
            if opt not in r.stdout:
                bad.append('nbg %s does not mention %s' % (' '.join(args), opt))
    for opt in table.get(cmd, ()):
        if opt not in top.stdout:
            bad.append('top-level help lacks %s %s' % (cmd, opt))
documented = set().union(*table.values())
in_code = set()
for path in glob.glob(os.path.join(root, 'programs', 'cmd_*.c')):
    in_code |= set(re.findall(r'"(--[a-z0-9][a-z0-9-]*)"', open(path).read()))
in_code -= {'--help'}
for path in glob.glob(os.path.join(root, 'programs', 'cmd_*.c')):
    if re.search(r'strcmp\(argv\[|argv\[i\]\[0\] == \'-\'', open(path).read()):
        bad.append('%s compares argv itself: options go through the table' % path)
strcmps = sum(len(re.findall(r'\bstrcmp\(', open(p).read()))
              for p in glob.glob(os.path.join(root, 'programs', '*.c')))
if strcmps > 10:
    bad.append('programs/*.c call strcmp %d times, more than 10: look a named choice up '
               'in a table (cli_lookup, programs/cli_names.c)' % strcmps)
for opt in sorted(in_code - documented):
    bad.append('option %s is parsed but not in programs/cli_table.c' % opt)
for args, path in ((['help', '--man'], 'doc/nbg.1'), (['help', '--completion'], 'completion/nbg')):
    want = run(*args).stdout
    have = open(os.path.join(root, path)).read()
    if want != have:
        bad.append('%s is stale: run scripts/gen-docs.sh' % path)
if shutil.which('man'):
    r = subprocess.run(['man', '-l', os.path.join(root, 'doc/nbg.1')], capture_output=True,
                       text=True, env=dict(os.environ, MANWIDTH='80', MAN_KEEP_FORMATTING=''))
    if r.returncode != 0 or 'EXIT STATUS' not in r.stdout:
        bad.append('man -l doc/nbg.1 failed: %s' % r.stderr[:200])
# The shared conventions: --quiet/--status, --opt=value, -- before an operand
# that starts with '-'.
import tempfile
sample = os.path.join(root, 'samples', 'sample.nb')
with tempfile.TemporaryDirectory() as tmp:
    notnbg = os.path.join(tmp, 'not.nb')
    open(notnbg, 'wb').write(b'PK\x03\x04' + bytes(60))
    r = run('verify', '--quiet', sample)
    if r.returncode != 0 or r.stdout:
        bad.append('verify --quiet on a good file: exit %d, %r' % (r.returncode, r.stdout))
    r = run('verify', '-q', sample, notnbg)
    if r.returncode != 1 or sample in r.stdout or 'not.nb: FAIL bad-magic' not in r.stdout:
        bad.append('verify -q with a bad file: exit %d, %r' % (r.returncode, r.stdout))
    r = run('verify', '--status', sample, notnbg)
    if r.returncode != 1 or r.stdout:
        bad.append('verify --status: exit %d, %r' % (r.returncode, r.stdout))
    dash = os.path.join(tmp, '-model.nb')
    shutil.copy(sample, dash)
    r = subprocess.run([*nbg, 'verify', '--', '-model.nb'], cwd=tmp, capture_output=True,
                       text=True)
    if r.returncode != 0 or './-model.nb: OK' not in r.stdout:
        bad.append('verify -- -model.nb: exit %d, %r %r' % (r.returncode, r.stdout, r.stderr))
    r = subprocess.run([*nbg, 'verify', '-model.nb'], cwd=tmp, capture_output=True, text=True)
    if r.returncode != 2:
        bad.append('verify -model.nb without --: exit %d, want 2' % r.returncode)
    svg = os.path.join(tmp, 'm.svg')
    r = run('map', sample, '--svg=' + svg)
    if r.returncode != 0 or not open(svg).read().startswith('<?xml'):
        bad.append('map --svg=OUT: exit %d %r' % (r.returncode, r.stderr))
    # two outputs for one picture: a sentence, not a bare usage
    r = run('graph', sample, '--svg', os.path.join(tmp, 'a.svg'), '--dot',
            os.path.join(tmp, 'a.dot'))
    if r.returncode != 2 or 'give one of them' not in r.stderr or \
            sorted(os.listdir(tmp)) != sorted(['not.nb', '-model.nb', 'm.svg']):
        bad.append('graph --svg A --dot B: exit %d, %r' % (r.returncode, r.stderr))
# The table's parser, for every option it parses: an unknown option, a
# typo (the option without its last letter), a missing value and a bad
# choice each give exit 2 and a sentence naming the option.
for cmd in commands:
    r = run(cmd, '--no-such-option')
    if r.returncode != 2 or "unknown option '--no-such-option'" not in r.stderr:
        bad.append('nbg %s --no-such-option: exit %d, %r' % (cmd, r.returncode, r.stderr))
listing = run('help', '--options').stdout.splitlines()
values = {}
for cmd in commands:
    for line in run(cmd, '--help').stdout.splitlines():
        m = re.match(r'  (--[a-z0-9-]+)(?: ([^ ]+))? ', line)
        if m:
            values[(cmd, m.group(1))] = m.group(2)
for line in listing:
    cmd, opt = line.split()
    typo = opt[:-1]
    r = run(cmd, typo)
    if r.returncode != 2 or 'did you mean %s?' % opt not in r.stderr:
        bad.append('nbg %s %s: exit %d, %r (no suggestion of %s)'
                   % (cmd, typo, r.returncode, r.stderr, opt))
    arg = values.get((cmd, opt))
    if arg is None:
        continue
    r = run(cmd, opt)
    if r.returncode != 2 or ('%s needs a value' % opt) not in r.stderr:
        bad.append('nbg %s %s (no value): exit %d, %r' % (cmd, opt, r.returncode, r.stderr))
    if '|' in arg and arg.islower():
        r = run(cmd, opt, 'no-such-choice')
        want = '%s is %s' % (opt, ', '.join(arg.split('|')[:-1]) + ' or ' + arg.split('|')[-1])
        if r.returncode != 2 or want not in r.stderr:
            bad.append('nbg %s %s no-such-choice: exit %d, %r, want %r'
                       % (cmd, opt, r.returncode, r.stderr, want))
for b in bad:
    print(b)
print('%d commands, %d options, all parsed by the table; %d problem(s)'
      % (len(commands), len(listing), len(bad)))
sys.exit(1 if bad else 0)
