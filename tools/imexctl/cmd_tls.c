// SPDX-License-Identifier: GPL-2.0-only
/*
 * imexctl tls init-ca|issue: a cluster CA and per-node certificates for
 * imexd's mutual TLS (TLS=yes in imexd.conf), made with OpenSSL's library
 * so that switching TLS on needs no other tool.  Keys are EC P-256, written
 * 0600; nothing that exists is ever overwritten.  A node certificate names
 * its node in a subjectAltName DNS entry, which is what imexd checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <json-c/json.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "args.h"
#include "print.h"

#define CA_DAYS		3650
#define NODE_DAYS	825
#define DAYS_MAX	36500

static const char init_synopsis[] = "DIR [--days N]";
static const char init_help[] =
	"Make a cluster CA for imexd's mutual TLS: DIR/ca.pem (the certificate\n"
	"every node gets as TLS_CA_FILE) and DIR/ca.key (mode 0600; keep it off\n"
	"the nodes). DIR is created (mode 0700) if missing. Refused if either\n"
	"file exists.\n\n"
	"Options:\n"
	"  --days N   validity in days (default 3650)\n";
static const char issue_synopsis[] = "DIR NODE... [--days N]";
static const char issue_help[] =
	"Issue a certificate and key for each NODE with the CA in DIR (made by\n"
	"'imexctl tls init-ca DIR'): DIR/NODE.pem names the node (subjectAltName\n"
	"DNS:NODE) and serves as its TLS_CERT_FILE, DIR/NODE.key (mode 0600) as\n"
	"its TLS_KEY_FILE. NODE is the node's NODE_NAME. Refused, with nothing\n"
	"written, if any of the files exists.\n\n"
	"Options:\n"
	"  --days N   validity in days (default 825)\n";

enum { OPT_DAYS = OPT_FIRST };

static int tls_parse(const char *cmd, const char *synopsis, const char *help,
		     int min_pos, int argc, char **argv, struct tls_args *a)
{
	static const struct option opts[] = {
		CLI_COMMON_OPTS,
		{ "days", required_argument, NULL, OPT_DAYS },
		{ 0 }
	};
	struct cli_opts o = CLI_OPTS(cmd, synopsis, help, opts, argc, argv,
				     &a->json);
	const char *why = NULL;
	char **pos;
	int c, n;
	size_t i;

	while ((c = cli_next_opt(&o)) != OPT_END) {
		if (c == CLI_HELP)
			return CLI_HELP;
		if (c != OPT_DAYS)
			return EXIT_USAGE;
		if (parse_u32(optarg, 1, DAYS_MAX, &a->days, &why) < 0)
			return cli_bad_value(&o, "--days", optarg, why);
	}
	n = cli_positional(&o, &pos);
	if (n < min_pos)
		return cli_usage_error(o.cmd, o.synopsis, "missing %s",
				       n ? "NODE" : "DIR");
	if (min_pos == 1 && n > 1)
		return cli_usage_error(o.cmd, o.synopsis, "unexpected argument '%s'",
				       pos[1]);
	if (!pos[0][0])
		return cli_bad_value(&o, "DIR", pos[0], "empty");
	a->dir = pos[0];
	a->nodes = pos + 1;
	a->nnodes = (size_t)n - 1;
	for (i = 0; i < a->nnodes; i++) {
		if (parse_name(a->nodes[i], &why) < 0)
			return cli_bad_value(&o, "NODE", a->nodes[i], why);
		if (!strcmp(a->nodes[i], "ca"))
			return cli_bad_value(&o, "NODE", a->nodes[i],
					     "'ca' names the CA's own files in DIR");
	}
	return 0;
}

int tls_init_ca_parse(int argc, char **argv, struct tls_args *a)
{
	a->days = CA_DAYS;
	return tls_parse("tls init-ca", init_synopsis, init_help, 1, argc, argv, a);
}

int tls_issue_parse(int argc, char **argv, struct tls_args *a)
{
	a->days = NODE_DAYS;
	return tls_parse("tls issue", issue_synopsis, issue_help, 2, argc, argv, a);
}

/* The OpenSSL error queue's first entry, or @dflt. */
static const char *ssl_why(const char *dflt)
{
	static char buf[256];
	unsigned long e = ERR_get_error();

	ERR_clear_error();
	if (!e)
		return dflt;
	ERR_error_string_n(e, buf, sizeof(buf));
	return buf;
}

static int add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
	int ok = ext && X509_add_ext(x, ext, -1);

	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

/*
 * A certificate for @key with subject CN=@cn, signed by @issuer/@issuer_key
 * (NULL: self-signed CA).  @node: the node name it carries, NULL for a CA.
 */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer,
		       EVP_PKEY *issuer_key, uint32_t days, const char *node)
{
	X509 *x = X509_new();
	BIGNUM *serial = BN_new();
	X509V3_CTX ctx;
	char san[IMEXCTL_NAME_MAX + 8];
	bool ok;

	ok = x && serial && X509_set_version(x, X509_VERSION_3) &&
	     /* 127 random bits: positive, unique without a serial file. */
	     BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
	     BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x)) &&
	     /* A few minutes back: clocks across a rack are not equal. */
	     X509_gmtime_adj(X509_getm_notBefore(x), -300) &&
	     X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400) &&
	     X509_set_pubkey(x, key) &&
	     X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN",
					MBSTRING_UTF8, (const unsigned char *)cn,
					-1, -1, 0) &&
	     X509_set_issuer_name(x, X509_get_subject_name(issuer ? issuer : x));
	BN_free(serial);
	if (!ok)
		goto fail;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
	if (add_ext(x, &ctx, NID_subject_key_identifier, "hash") ||
	    add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always"))
		goto fail;
	if (!node) {
		if (add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
		    add_ext(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign"))
			goto fail;
	} else {
		snprintf(san, sizeof(san), "DNS:%s", node);
		if (add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE") ||
		    add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature") ||
		    add_ext(x, &ctx, NID_ext_key_usage, "serverAuth,clientAuth") ||
		    add_ext(x, &ctx, NID_subject_alt_name, san))
			goto fail;
	}
	if (!X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()))
		goto fail;
	return x;
fail:
	X509_free(x);
	return NULL;
}

/* Create @path (never overwriting) with @mode and write @key or @cert. */
static int write_pem(const char *path, mode_t mode, EVP_PKEY *key, X509 *cert)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	FILE *f;
	int ok;

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -ENOMEM;
	}
	ok = key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) :
		   PEM_write_X509(f, cert);
	if (fclose(f) != 0 || !ok) {
		unlink(path);
		return -EIO;
	}
	return 0;
}

/* Fail unless none of @paths exists. */
static int check_absent(struct cli *cli, char (*paths)[4096], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (access(paths[i], F_OK) == 0 || errno != ENOENT)
			return cli_fail(cli, "%s: %s: refusing to overwrite; nothing was written",
					paths[i], access(paths[i], F_OK) == 0 ?
					"exists" : strerror(errno));
	return 0;
}

/* Write a key and its certificate; on failure neither stays. */
static int write_pair(struct cli *cli, const char *keypath, const char *certpath,
		      EVP_PKEY *key, X509 *cert)
{
	int r = write_pem(keypath, 0600, key, NULL);

	if (r < 0)
		return cli_fail(cli, "%s: %s", keypath, strerror(-r));
	r = write_pem(certpath, 0644, NULL, cert);
	if (r < 0) {
		unlink(keypath);
		return cli_fail(cli, "%s: %s", certpath, strerror(-r));
	}
	return 0;
}

static void print_written(bool json, char (*paths)[4096], size_t n)
{
	size_t i;

	print_mode(json);
	print_open_object(NULL);
	print_open_array("files");
	for (i = 0; i < n; i++) {
		print_string(PRINT_ANY, NULL, "wrote %s", paths[i]);
		print_string(PRINT_TEXT, NULL, "%s\n",
			     strstr(paths[i], ".key") ? " (mode 0600)" : "");
	}
	print_close_array();
	print_close_object();
}

static int path_in(struct cli *cli, char *buf, const char *dir, const char *name,
		   const char *ext)
{
	if ((size_t)snprintf(buf, 4096, "%s/%s.%s", dir, name, ext) >= 4096)
		return cli_fail(cli, "%s: the directory name is too long", dir);
	return 0;
}

static int tls_init_ca(struct cli *cli, int argc, char **argv)
{
	struct tls_args a = { .json = cli->json };
	char paths[2][4096];
	EVP_PKEY *key = NULL;
	X509 *cert = NULL;
	int r = tls_init_ca_parse(argc, argv, &a);

	if (r)
		return r == CLI_HELP ? EXIT_OK : r;
	if (mkdir(a.dir, 0700) < 0 && errno != EEXIST)
		return cli_fail(cli, "cannot create %s: %s", a.dir, strerror(errno));
	if (path_in(cli, paths[0], a.dir, "ca", "pem") ||
	    path_in(cli, paths[1], a.dir, "ca", "key") ||
	    check_absent(cli, paths, 2))
		return EXIT_FAIL;
	key = EVP_EC_gen("P-256");
	if (key)
		cert = make_cert(key, "imex cluster CA", NULL, NULL, a.days, NULL);
	if (!cert)
		r = cli_fail(cli, "cannot make the CA: %s", ssl_why("OpenSSL failed"));
	else if (write_pair(cli, paths[1], paths[0], key, cert) == 0)
		print_written(a.json, paths, 2);
	else
		r = EXIT_FAIL;
	X509_free(cert);
	EVP_PKEY_free(key);
	return r;
}

/* DIR/ca.pem and DIR/ca.key, checked to belong together. */
static int load_ca(struct cli *cli, const char *dir, X509 **cert, EVP_PKEY **key)
{
	char path[4096];
	FILE *f;

	*cert = NULL;
	*key = NULL;
	if (path_in(cli, path, dir, "ca", "pem"))
		return EXIT_FAIL;
	f = fopen(path, "re");
	if (!f)
		return cli_fail(cli, "%s: %s: make a CA with 'imexctl tls init-ca %s'",
				path, strerror(errno), dir);
	*cert = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (!*cert)
		return cli_fail(cli, "%s: not a PEM certificate (%s)", path,
				ssl_why("no detail"));
	if (path_in(cli, path, dir, "ca", "key"))
		return EXIT_FAIL;
	f = fopen(path, "re");
	if (!f)
		return cli_fail(cli, "%s: %s: issue on the host that holds the CA key",
				path, strerror(errno));
	*key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!*key)
		return cli_fail(cli, "%s: not an unencrypted PEM key (%s)", path,
				ssl_why("no detail"));
	if (X509_check_private_key(*cert, *key) != 1)
		return cli_fail(cli, "%s does not belong to %s/ca.pem", path, dir);
	return 0;
}

static int tls_issue(struct cli *cli, int argc, char **argv)
{
	struct tls_args a = { .json = cli->json };
	char (*paths)[4096] = NULL;
	EVP_PKEY *cakey = NULL;
	X509 *ca = NULL;
	int r = tls_issue_parse(argc, argv, &a);
	size_t i, done = 0;

	if (r)
		return r == CLI_HELP ? EXIT_OK : r;
	r = load_ca(cli, a.dir, &ca, &cakey);
	if (r)
		goto out;
	paths = calloc(a.nnodes * 2, sizeof(*paths));
	if (!paths) {
		r = cli_fail(cli, "out of memory");
		goto out;
	}
	for (i = 0; i < a.nnodes; i++) {
		if (path_in(cli, paths[2 * i], a.dir, a.nodes[i], "pem") ||
		    path_in(cli, paths[2 * i + 1], a.dir, a.nodes[i], "key")) {
			r = EXIT_FAIL;
			goto out;
		}
	}
	r = check_absent(cli, paths, 2 * a.nnodes);
	for (i = 0; !r && i < a.nnodes; i++) {
		EVP_PKEY *key = EVP_EC_gen("P-256");
		X509 *cert = key ? make_cert(key, a.nodes[i], ca, cakey, a.days,
					     a.nodes[i]) : NULL;

		if (!cert)
			r = cli_fail(cli, "cannot make the certificate of %s: %s",
				     a.nodes[i], ssl_why("OpenSSL failed"));
		else
			r = write_pair(cli, paths[2 * i + 1], paths[2 * i], key, cert);
		if (!r)
			done++;
		X509_free(cert);
		EVP_PKEY_free(key);
	}
	if (r) {
		/* All or nothing: remove the pairs already written. */
		for (i = 0; i < done; i++) {
			unlink(paths[2 * i]);
			unlink(paths[2 * i + 1]);
		}
	} else {
		print_written(a.json, paths, 2 * a.nnodes);
	}
out:
	free(paths);
	X509_free(ca);
	EVP_PKEY_free(cakey);
	return r;
}

static const struct cli_cmd verbs[] = {
	{ "init-ca", tls_init_ca, init_synopsis, "make a cluster CA for imexd's mutual TLS" },
	{ "issue", tls_issue, issue_synopsis, "issue certificates that name nodes, with that CA" },
};

int cmd_tls(struct cli *cli, int argc, char **argv)
{
	return cli_dispatch(cli, "tls", verbs, sizeof(verbs) / sizeof(verbs[0]), argc, argv);
}
