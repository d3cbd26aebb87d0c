// SPDX-License-Identifier: GPL-2.0
/*
 * The Raft message codec (imexd/raftwire.c, decoder in raftwire_decode.c).
 * Any input the decoder accepts must re-encode to the same bytes (one
 * encoding per message) and decode again; a refusal must be one of the
 * documented errors with a reason.  The sender is server 3 (the seeds'
 * RequestVote candidate).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "raftwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct raft_message m, m2;
	const char *why = NULL;
	uint8_t *out = NULL;
	size_t len = 0;
	int r;

	r = imexd_raftwire_decode(data, size, 3, "n3", &m, &why);
	if (r) {
		if (r != -EBADMSG && r != -EPROTO && r != -E2BIG && r != -ENOMEM)
			abort();
		if (!why)
			abort();
		return 0;
	}
	if (m.server_id != 3 || !m.server_address)
		abort();
	r = imexd_raftwire_encode(&m, &out, &len);
	if (r == -ENOMEM)
		goto out;
	if (r || len != size || memcmp(out, data, size))
		abort();
	r = imexd_raftwire_decode(out, len, 3, "n3", &m2, &why);
	if (r == -ENOMEM)
		goto out;
	if (r || m2.type != m.type)
		abort();
	imexd_raftwire_free(&m2);
out:
	free(out);
	imexd_raftwire_free(&m);
	return 0;
}
