"""Running the tools from the runtime tests: commands that must succeed, and
the mpirun prefix for N ranks on this machine."""

import atexit
import os
import shlex
import shutil
import subprocess
import sys
import tempfile


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


def offload_flags(work, offload, stage, extra=()):
    """zero-opt flags that put the optimizer states in host memory
    (`offload` "cpu") or on NVMe under WORK/nvme ("nvme"; the parameters too
    at stage 3), with `extra` flags; none without `offload`."""
    if not offload:
        return []
    flags = ['--zero-set=zero_optimization.offload_optimizer.device="%s"' %
             offload] + list(extra)
    if offload == "nvme":
        nvme = os.path.join(work, "nvme")
        os.makedirs(nvme, exist_ok=True)
        flags.append('--zero-set=zero_optimization.offload_optimizer.'
                     'nvme_path="%s"' % nvme)
        if stage == 3:
            flags += ['--zero-set=zero_optimization.offload_param.device='
                      '"nvme"',
                      '--zero-set=zero_optimization.offload_param.'
                      'nvme_path="%s"' % nvme,
                      '--zero-set=zero_optimization.'
                      'stage3_param_persistence_threshold=0']
    return flags


def mpirun(ranks):
    """`mpirun` for `ranks` ranks sharing this machine's cores (Open MPI
    refuses root unless told), with its session files in a directory of its
    own: concurrent mpiruns sharing one $TMPDIR create and remove its
    ompi.<host>.<uid> under each other."""
    session = tempfile.mkdtemp(prefix="mpi.")
    atexit.register(shutil.rmtree, session, ignore_errors=True)
    cmd = ["mpirun", "--oversubscribe", "--mca", "orte_tmpdir_base", session,
           "-np", str(ranks)]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd
