# The warning set of the project's user-space C, one copy for every
# Makefile that compiles with it (common, libimexctl, tools, contrib/slurm).
WARNINGS := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wformat=2 -Wno-format-nonliteral \
            -Wpointer-arith -Wundef
