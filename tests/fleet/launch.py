#!/usr/bin/env python3
"""launch.py OUTDIR N SCRIPT [ARGS...] - a launcher as a shell or an srun step is one: N test-bed jobs of SCRIPT
(tests/testbed/job.sh pypi-2.14.1, live: each waits in its checkpoint) with RANK, LOCAL_RANK and WORLD_SIZE in
their environment, every one a process below this one (it is their subreaper: job.sh starts them and leaves).
Rank R's files are in OUTDIR/job-R (job.sh's OUTDIR: its truth, pid). When all wait, writes OUTDIR/launcher (this
pid) and reaps them until killed. Exit 77 when the test bed cannot run the build, 1 when a job failed."""
import ctypes
import os
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main(out, n, script, *args):
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testbed", "job.sh")
    for r in range(int(n)):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(n))
        rc = subprocess.run([job, "pypi-2.14.1", script, "live", os.path.join(out, "job-%d" % r)] + list(args),
                            env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(out, "job-%d.err" % r), "w"))
        if rc.returncode != 0:
            return rc.returncode
    with open(os.path.join(out, "launcher"), "w") as f:
        f.write("%d\n" % os.getpid())
    while True:  # reap the jobs that end (a subreaper's duty), as a launcher does
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            time.sleep(1)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
