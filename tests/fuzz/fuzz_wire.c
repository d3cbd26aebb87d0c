// SPDX-License-Identifier: GPL-2.0
/*
 * The imexd wire codec.  Any frame the decoder accepts must re-encode to the
 * same bytes (the format has one encoding per message), decode again, and
 * agree with imexd_frame_len().  Uses only the generic entry points, so new
 * message types are covered without changes here.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imexd_msg m, m2;
	const char *why = NULL;
	uint8_t *out = NULL, *out2 = NULL;
	size_t len = 0, len2 = 0;
	bool legacy;
	long flen;
	int r;

	flen = imexd_frame_len(data, size);
	if (flen > 0 && (size_t)flen > IMEXD_HEADER_LEN +
	    (data[5] == IMEXD_MSG_RAFT ? IMEXD_RAFT_BODY_MAX : IMEXD_BODY_MAX))
		abort();

	memset(&m, 0, sizeof(m));
	r = imexd_msg_decode(data, size, &m, &why);
	if (r) {
		if (r != -EBADMSG && r != -EPROTO && r != -E2BIG && r != -ENOMEM)
			abort();
		if (!why)
			abort();
		return 0;
	}
	/* A frame that decodes is one whole frame. */
	if (flen != (long)size)
		abort();

	r = imexd_msg_encode(&m, &out, &len);
	if (r == -ENOMEM)
		goto out;
	/* A protocol-2 HELLO (no group id) is read so that its range can be
	 * reported; it is written back in this protocol's layout. */
	legacy = (m.type == IMEXD_MSG_HELLO || m.type == IMEXD_MSG_HELLO_ACK) &&
		 len == size + 8;
	if (r || (!legacy && (len != size || memcmp(out, data, size))))
		abort();
	if (legacy && m.u.hello.group)
		abort();

	memset(&m2, 0, sizeof(m2));
	r = imexd_msg_decode(out, len, &m2, &why);
	if (r == -ENOMEM)
		goto out;
	if (r)
		abort();
	r = imexd_msg_encode(&m2, &out2, &len2);
	if (r == 0 && (len2 != len || memcmp(out2, out, len)))
		abort();
	if (m2.type != m.type)
		abort();
	imexd_msg_free(&m2);
out:
	free(out2);
	free(out);
	imexd_msg_free(&m);
	return 0;
}
