#!/usr/bin/env python3
"""launch.py OUTDIR -- SCRIPT [ARGS...] [-- SCRIPT [ARGS...]]... - a launcher as a shell or an srun step is one:
one test-bed job per "--" group (tests/testbed/job.sh pypi-2.14.1 SCRIPT live: each waits in its checkpoint), rank
R the Rth group, with RANK, LOCAL_RANK and WORLD_SIZE in its environment, every one a process below this one (it
is their subreaper: job.sh starts them and leaves). Rank R's files are in OUTDIR/job-R (job.sh's OUTDIR: its
truth, pid, job.vars). When all wait, writes OUTDIR/launcher (this pid) and reaps them until killed. Exit 77 when
the test bed cannot run the build, 1 when a job failed."""
import ctypes
import os
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def groups(words):
    out = []
    for w in words:
        if w == "--":
            out.append([])
        elif out:
            out[-1].append(w)
    return [g for g in out if g]


def main(out, *words):
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testbed", "job.sh")
    ranks = groups(words)
    for r, (script, *args) in enumerate(ranks):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(len(ranks)))
        jobdir = os.path.join(out, "job-%d" % r)
        rc = subprocess.run([job, "pypi-2.14.1", script, "live", jobdir] + args, env=env,
                            stdout=open(jobdir + ".vars", "w"), stderr=open(jobdir + ".err", "w"))
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
