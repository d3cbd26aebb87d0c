/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the test_net*.c files: the harness in test_net.c (a side's
 * callbacks and counts, the event loop, raw sockets) the bounds
 * (test_net_bounds.c) and TLS (test_net_tls.c) tests run on.
 */
#ifndef IMEXD_TEST_NET_H
#define IMEXD_TEST_NET_H

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>
#include <openssl/ssl.h>
#include "log.h"
#include "net.h"
#include "peers.h"
#include "sock.h"
#include "tls.h"

struct side {
	const char *name;
	unsigned up, failed, down, msgs;
	uint64_t last_conn;
	bool last_outbound;
	uint8_t last_type;
	uint32_t last_raft_len;
	char last_addr[300];
	/* test_bounds: messages on one watched connection; an answer of
	 * echo_len bytes to every other message, through echo_net. */
	uint64_t up_conn;	/* the newest connection up */
	uint64_t watch_conn;
	unsigned watch_msgs;
	struct imexd_net *echo_net;
	const uint8_t *echo;
	size_t echo_len, echo_peak;
	unsigned echo_refused;
};
extern sd_event *ev;

void check(bool ok, const char *fmt, ...);
bool run_until(const unsigned *counter, unsigned want, int ms);
void run_for(int ms);
int hello(uint8_t type, const char *name, uint8_t **frame, size_t *len);
struct imexd_net *mknet(struct side *s, uint16_t port,
			struct imexd_tls *tls);
const char *addr_of(struct imexd_net *net, char *buf, size_t len);
int raw_connect_from(const char *src, uint16_t port);
int raw_connect(uint16_t port);
bool raw_closed(int fd);

/* test_net_bounds.c */
void test_bounds(void);
void test_raft_bound(void);

/* test_net_tls.c */
void test_tls(const char *dir);
void test_tls_names(const char *dir);
void test_tls_auth(const char *dir);

#endif
