#!/usr/bin/env python3
"""task.py OUTDIR SCRIPT [ARGS...] - one task of an srun step as a rank of a test-bed job: starts
tests/testbed/job.sh pypi-2.14.1 SCRIPT live OUTDIR/job-R (R is $SLURM_PROCID; RANK is not set, so that memprof
names the rank by SLURM_PROCID as it does for a plain `srun python train.py`), then stays alive as the job's
subreaper (job.sh starts the job and leaves: the job is then a child of this task, so a process below the step's
slurmstepd, and srun does not end the step) until the job has ended. OUTDIR/job-R.vars and .err hold job.sh's
output, OUTDIR/job-R.rc its status when it failed. Exit: job.sh's status when it failed, else 0."""
import ctypes
import os
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main(out, script, *args):
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testbed", "job.sh")
    jobdir = os.path.join(out, "job-%s" % os.environ["SLURM_PROCID"])
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK")}
    rc = subprocess.run([job, "pypi-2.14.1", script, "live", jobdir] + list(args), env=env,
                        stdout=open(jobdir + ".vars", "w"), stderr=open(jobdir + ".err", "w")).returncode
    if rc != 0:
        with open(jobdir + ".rc", "w") as f:
            f.write("%d\n" % rc)
        return rc
    while True:  # the job is ours now: reap it (and whatever it leaves) until none is left
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        except InterruptedError:
            time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
