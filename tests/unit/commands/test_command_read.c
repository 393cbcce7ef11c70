/* test_command_read.c - mp_command_run's reads of a live process (src/commands/command_read.c): on a child
   process whose "state" is a word in memory it shares with this test, a command that guards it, moves it or not
   during the read (as a job would), warns of damage as scripted and prints; what reaches the front end, how many
   reads it took, and the error when the state keeps moving. */
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mp_command.h"
#include "mp_out.h"
#include "unit_main.h"

/* Shared with the child (mapped before the fork: the same address in both). */
struct shared {
	atomic_ulong state; /* what the command guards */
	atomic_ulong lock;  /* a lock word (mp_target_guard_idle): nonzero, a writer is inside */
};

static struct shared *sh;
static pid_t child;

/* What the front end got. */
static mp_out printed, warned;
static int agains;

/* The script of the command: the state moved during each read (MOVING), damage warnings in its first
   DAMAGED_READS reads (SAME_DAMAGE: the same line every time, else one naming the read), a note every read; the
   target held or not; the lock taken until the job is let go (LOCKED_ONCE) or for good (LOCKED). */
struct demo_script {
	unsigned damaged_reads;
	bool moving, same_damage, note, stop, locked_once, locked;
	unsigned runs;
};
static struct demo_script script;

static void front_warn(void *ctx, const char *line)
{
	(void)ctx;
	mp_out_printf(&warned, "%s\n", line);
}

static int front_emit(mp_command_ctx *c, const mp_out *text)
{
	(void)c;
	mp_out_write(&printed, text->data, text->len);
	return MP_CMD_OK;
}

static void front_again(mp_command_ctx *c)
{
	(void)c;
	agains++;
	if (script.locked_once) /* the writer leaves while the job goes on a moment */
		atomic_store(&sh->lock, 0);
}

static const mp_command_front front = {
	.mask = MP_FRONT_CLI, .emit = front_emit, .warn = front_warn, .again = front_again,
};

/* The command: the process opened once per run (C->live), its state guarded and read, then printed. */
static int run_demo(mp_command_ctx *c, const mp_command_args *a)
{
	mp_target_opts opts = { .stop = script.stop };
	uint64_t value;
	mp_diag diag;
	mp_out out;
	int rc;

	(void)a;
	mp_command_diag(c, &diag);
	if (c->live == NULL && mp_target_open_pid(child, &opts, &c->live, &diag) != MP_OK)
		return mp_command_error(c, "open: %s", diag.msg);
	script.runs++;
	mp_target_guard_idle(c->live, (uint64_t)(uintptr_t)&sh->lock, sizeof sh->lock);
	mp_target_guard(c->live, (uint64_t)(uintptr_t)&sh->state, sizeof sh->state);
	if (script.moving) /* the job allocates while it is read */
		atomic_fetch_add(&sh->state, 1);
	if (mp_target_read_u64(c->live, (uint64_t)(uintptr_t)&sh->state, &value, &diag) != MP_OK)
		return mp_command_error(c, "read: %s", diag.msg);
	if (script.runs <= script.damaged_reads) {
		if (script.same_damage)
			mp_warn_damage(&diag, "the list at 0x1000 does not link back");
		else
			mp_warn_damage(&diag, "the list at 0x1000 does not link back (read %u)", script.runs);
	}
	if (script.note)
		mp_warn(&diag, "a note, true of every read");
	if ((rc = mp_command_gate(c)) != MP_CMD_OK)
		return rc;
	mp_out_init(&out);
	mp_out_printf(&out, "state read\n");
	rc = c->front->emit(c, &out);
	mp_out_free(&out);
	return rc;
}

static const mp_command demo = { "demo", MP_FRONT_ALL, "", "", "", "", NULL, "", run_demo, 0, NULL };

/* Run the demo command as scripted: its status; C's error in ERR. */
static int run(char *err, size_t size)
{
	mp_command_args a = { .cmd = &demo };
	mp_command_ctx c = { .front = &front };
	int rc;

	mp_out_free(&printed);
	mp_out_free(&warned);
	mp_out_init(&printed);
	mp_out_init(&warned);
	agains = 0;
	script.runs = 0;
	atomic_store(&sh->lock, script.locked || script.locked_once);
	rc = mp_command_run(&c, &a);
	mp_target_close(c.live);
	snprintf(err, size, "%s", c.error);
	return rc;
}

/* The state letter of process PID ('S', 't', ...). */
static char state_of(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	p = fgets(buf, sizeof buf, f) != NULL ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p != NULL ? p[2] : 0;
}

static const char *text(mp_out *o)
{
	mp_out_putc(o, '\0');
	return o->data;
}

static void test_still_and_clean(void)
{
	char err[640];

	script = (struct demo_script){ 0 };
	CU_ASSERT_EQUAL(run(err, sizeof err), MP_CMD_OK);
	CU_ASSERT_EQUAL(script.runs, 1);
	CU_ASSERT_STRING_EQUAL(text(&printed), "state read\n");
	CU_ASSERT_STRING_EQUAL(text(&warned), "");
}

/* A job that moves under every read: five reads, nothing printed, no warning, the racing error. */
static void test_keeps_moving(void)
{
	char err[640], want[128];

	script = (struct demo_script){ .moving = true, .note = true };
	CU_ASSERT_EQUAL(run(err, sizeof err), MP_CMD_BAD);
	CU_ASSERT_EQUAL(script.runs, 5);
	CU_ASSERT_EQUAL(agains, 4);
	CU_ASSERT_STRING_EQUAL(text(&printed), "");
	CU_ASSERT_STRING_EQUAL(text(&warned), "");
	snprintf(want, sizeof want, "pid %d: the job was running: use --stop (it changed under each of 5 reads)",
		 (int)child);
	CU_ASSERT_STRING_EQUAL(err, want);
}

/* Damage seen once, under a read nothing moved under: read again; the second read is clean and stands alone. */
static void test_damage_once(void)
{
	char err[640];

	script = (struct demo_script){ .damaged_reads = 1, .note = true };
	CU_ASSERT_EQUAL(run(err, sizeof err), MP_CMD_OK);
	CU_ASSERT_EQUAL(script.runs, 2);
	CU_ASSERT_STRING_EQUAL(text(&printed), "state read\n");
	CU_ASSERT_STRING_EQUAL(text(&warned), "a note, true of every read\n");
}

/* Damage that two reads find the same, nothing moving: the process's own, said once. */
static void test_damage_twice_the_same(void)
{
	char err[640];

	script = (struct demo_script){ .damaged_reads = 99, .same_damage = true };
	CU_ASSERT_EQUAL(run(err, sizeof err), MP_CMD_OK);
	CU_ASSERT_EQUAL(script.runs, 2);
	CU_ASSERT_STRING_EQUAL(text(&printed), "state read\n");
	CU_ASSERT_STRING_EQUAL(text(&warned), "the list at 0x1000 does not link back\n");
}

/* Damage different at each read (what a race gives) never settles: the racing error, no damage said. */
static void test_damage_that_differs(void)
{
	char err[640];

	script = (struct demo_script){ .damaged_reads = 99 };
	CU_ASSERT_EQUAL(run(err, sizeof err), MP_CMD_BAD);
	CU_ASSERT_EQUAL(script.runs, 5);
	CU_ASSERT_STRING_EQUAL(text(&warned), "");
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "the job was running: use --stop"));
}

/* A process held still: what it moves changes nothing; damage that two holds find the same is said, once; the
   job let go at the output. */
static void test_held(void)
{
	char err[640];

	script = (struct demo_script){ .damaged_reads = 99, .same_damage = true, .moving = true, .stop = true };
	CU_ASSERT_EQUAL(run(err, sizeof err), MP_CMD_OK);
	CU_ASSERT_EQUAL(script.runs, 2);
	CU_ASSERT_STRING_EQUAL(text(&printed), "state read\n");
	CU_ASSERT_STRING_EQUAL(text(&warned), "the list at 0x1000 does not link back\n");
	CU_ASSERT_NOT_EQUAL(state_of(child), 't'); /* let go */
	script = (struct demo_script){ .stop = true, .note = true };
	CU_ASSERT_EQUAL(run(err, sizeof err), MP_CMD_OK);
	CU_ASSERT_EQUAL(script.runs, 1);
	CU_ASSERT_STRING_EQUAL(text(&warned), "a note, true of every read\n");
}

/* Held damage that changes from hold to hold (a writer caught mid-update each time) is read as it stands at
   the last: the job is held, never "running". */
static void test_held_damage_that_differs(void)
{
	char err[640];

	script = (struct demo_script){ .damaged_reads = 99, .stop = true };
	CU_ASSERT_EQUAL(run(err, sizeof err), MP_CMD_OK);
	CU_ASSERT_EQUAL(script.runs, 5);
	CU_ASSERT_STRING_EQUAL(text(&printed), "state read\n");
	CU_ASSERT_STRING_EQUAL(text(&warned), "the list at 0x1000 does not link back (read 5)\n");
}

/* A hold that caught a writer inside (its lock taken) lets the job go a moment and holds it again. */
static void test_held_mid_update(void)
{
	char err[640];

	script = (struct demo_script){ .stop = true, .locked_once = true };
	CU_ASSERT_EQUAL(run(err, sizeof err), MP_CMD_OK);
	CU_ASSERT_EQUAL(script.runs, 2);
	CU_ASSERT_STRING_EQUAL(text(&printed), "state read\n");
	CU_ASSERT_STRING_EQUAL(text(&warned), "");
	/* a writer stuck inside: read as it stands at the last hold, and said */
	script = (struct demo_script){ .stop = true, .locked = true };
	CU_ASSERT_EQUAL(run(err, sizeof err), MP_CMD_OK);
	CU_ASSERT_EQUAL(script.runs, 5);
	CU_ASSERT_STRING_EQUAL(text(&printed), "state read\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(text(&warned), "each hold caught a thread of the job inside"));
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "a still process read once", test_still_and_clean },
		{ "a process that keeps moving: the racing error", test_keeps_moving },
		{ "damage once: read again, not said", test_damage_once },
		{ "the same damage twice: said", test_damage_twice_the_same },
		{ "damage that differs: the racing error", test_damage_that_differs },
		{ "a held process: read once, or twice for damage", test_held },
		{ "held damage that differs: the last read's", test_held_damage_that_differs },
		{ "a hold mid-update: held again", test_held_mid_update },
	};
	int rc;

	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	if ((child = fork()) == 0)
		for (;;)
			pause();
	mp_out_init(&printed);
	mp_out_init(&warned);
	rc = unit_run("command_read", tests, sizeof tests / sizeof tests[0], NULL, NULL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	mp_out_free(&printed);
	mp_out_free(&warned);
	return rc;
}
