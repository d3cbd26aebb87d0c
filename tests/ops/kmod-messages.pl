#!/usr/bin/perl
# The format string of every message imex.ko can show (extended acks and
# log lines) in the given files, one per line, as "file<TAB>format".
use strict;
use warnings;

for my $f (@ARGV) {
	open(my $fh, '<', $f) or die "$f: $!\n";
	my $src = do { local $/; <$fh> };
	close $fh;
	while ($src =~ /\b(?:NL_SET_ERR_MSG(?:_ATTR)?|imex_extack_fmt|pr_(?:err|warn|info|notice)(?:_ratelimited)?)\s*\(((?:[^;"]|"(?:[^"\\]|\\.)*")*?)((?:"(?:[^"\\]|\\.)*"\s*)+)/g) {
		my $fmt = join('', $2 =~ /"((?:[^"\\]|\\.)*)"/g);
		print "$f\t$fmt\n";
	}
}
