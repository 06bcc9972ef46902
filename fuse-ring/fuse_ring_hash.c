/* Find the ring entry carrying a request by its unique (== commit_id). */
#include <errno.h>
#include <stdlib.h>

#include "fuse_ring_internal.h"

static unsigned int fr_bucket(const struct fr_session *s, uint64_t unique)
{
	/* uniques advance by 2 (bit 0 marks INTERRUPT) */
	return (unsigned int)((unique >> 1) * 0x9E3779B97F4A7C15ULL >> 40) & s->hash_mask;
}

int fr_hash_init(struct fr_session *s, unsigned int nr_ents)
{
	unsigned int n = 16;

	while (n < 2 * nr_ents)
		n <<= 1;
	s->hash = calloc(n, sizeof(*s->hash));
	if (!s->hash)
		return -ENOMEM;
	s->hash_mask = n - 1;
	return 0;
}

void fr_hash_add(struct fr_session *s, struct fr_ent *ent)
{
	unsigned int b = fr_bucket(s, ent->unique);

	pthread_mutex_lock(&s->hash_lock);
	ent->hash_next = s->hash[b];
	s->hash[b] = ent;
	pthread_mutex_unlock(&s->hash_lock);
}

struct fr_ent *fr_hash_take(struct fr_session *s, uint64_t unique)
{
	struct fr_ent **pp, *ent = NULL;

	if (!s->hash)
		return NULL;
	pthread_mutex_lock(&s->hash_lock);
	for (pp = &s->hash[fr_bucket(s, unique)]; *pp; pp = &(*pp)->hash_next) {
		if ((*pp)->unique == unique) {
			ent = *pp;
			*pp = ent->hash_next;
			ent->hash_next = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&s->hash_lock);
	return ent;
}

void fr_hash_free(struct fr_session *s)
{
	free(s->hash);
	s->hash = NULL;
}
