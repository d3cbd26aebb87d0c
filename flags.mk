# flags.mk: the C flags every user-space part builds with, included by each
# Makefile that compiles C (common, libimexctl, tools, imexd, contrib/slurm, bench
# and the test directories).  A part adds what it needs on top (sanitizers,
# -fPIC, include paths); it does not drop any of these.
#
#   WARNINGS  the language and warning set; any warning fails the build
#   DEPFLAGS  header dependencies written next to each object (.d files,
#             which the including Makefile reads with -include)
WARNINGS := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wformat=2 -Wno-format-nonliteral \
            -Wpointer-arith -Wundef
DEPFLAGS := -MMD -MP
