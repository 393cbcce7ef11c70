/* target_live.c - what a live target is (held still, still, running), how it is held, and letting it go and
   holding it again: the target interface over the source's table. */
#include "target_int.h"

#include <string.h>

#include "hold_int.h"

enum mp_target_live mp_target_live(mp_target *t)
{
	if (t->live < 0)
		t->live = t->ops->live != NULL ? (int)t->ops->live(t) : (int)MP_LIVE_NONE;
	return (enum mp_target_live)t->live;
}

void mp_target_hold_info_get(const mp_target *t, mp_target_hold_info *out)
{
	memset(out, 0, sizeof *out);
	if (t->ops->hold_info != NULL)
		t->ops->hold_info(t, out);
}

mp_err mp_target_again(mp_target *t, mp_diag *diag)
{
	mp_err err = MP_OK;

	mp_target_flush(t);
	if (t->ops->hold_again != NULL)
		err = t->ops->hold_again(t, diag);
	t->live = -1;
	return err;
}

void mp_target_let_go(mp_target *t)
{
	if (t->ops->let_go != NULL)
		t->ops->let_go(t);
	t->live = -1;
}

pid_t mp_target_release_all(void)
{
	return hold_release_all();
}
