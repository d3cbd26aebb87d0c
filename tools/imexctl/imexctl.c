// SPDX-License-Identifier: GPL-2.0-only
/* imexctl: control IMEX channels on this node.  See imexctl(8). */
#include "cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
