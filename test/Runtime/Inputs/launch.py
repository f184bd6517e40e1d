"""Running the tools from the runtime tests: commands that must succeed, and
the mpirun prefix for N ranks on this machine."""

import os
import shlex
import subprocess
import sys


def run(cmd):
    """Runs `cmd`; returns its output, or exits naming the test script and
    the command."""
    who = os.path.basename(sys.argv[0])
    result = subprocess.run(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit("%s: command failed (exit %d): %s\n%s" %
                 (who, result.returncode, " ".join(map(shlex.quote, cmd)),
                  result.stdout))
    return result.stdout


def mpirun(ranks):
    """`mpirun` for `ranks` ranks sharing this machine's cores (Open MPI
    refuses root unless told)."""
    cmd = ["mpirun", "--oversubscribe", "-np", str(ranks)]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd
