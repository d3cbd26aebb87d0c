#!/usr/bin/perl
# The worst-case length of every formatted extended-ack message in kmod/*.c:
# the kernel formats them into an 80-byte buffer (NETLINK_MAX_FMTMSG_LEN, and
# IMEX_EXTACK_LEN on 6.1), so with every argument at its longest (a name of
# IMEX_NAME_MAX - 1 characters, a UUID, the largest number of its type) a
# message must take at most 79 bytes.  Prints "file:line: LEN: format" for
# each; --check prints only those over the limit and fails if any is.
use strict;
use warnings;

my $check = @ARGV && $ARGV[0] eq '--check' ? shift : '';
my $limit = 79;
my $name_max = 63;	# IMEX_NAME_MAX - 1
my %conv = (
	's'   => $name_max,	# every %s in an extack is a domain, node or member name
	'u'   => 10, 'd' => 11, 'x' => 8,
	'lu'  => 20, 'ld' => 20, 'llu' => 20, 'lld' => 20, 'llx' => 16,
	'pUb' => 36, 'pUl' => 36,
);
my ($n, $bad) = (0, 0);
for my $f (@ARGV) {
	open(my $fh, '<', $f) or die "$f: $!\n";
	my $src = do { local $/; <$fh> };
	close $fh;
	while ($src =~ /\bimex_extack_fmt\s*\(\s*[^,]+,\s*((?:"(?:[^"\\]|\\.)*"\s*)+)/g) {
		my ($lits, $pos) = ($1, $-[0]);
		my $line = 1 + (substr($src, 0, $pos) =~ tr/\n//);
		my $fmt = join('', $lits =~ /"((?:[^"\\]|\\.)*)"/g);
		(my $text = $fmt) =~ s/\\(.)/$1/g;
		my $len = 0;
		while ($text =~ /\G(?:%%|%(?:[-0-9.]*)(pU[bl]|ll[udx]|l[ud]|[udxs])|([^%]+))/gc) {
			if (defined $1) { $len += $conv{$1}; }
			elsif (defined $2) { $len += length $2; }
			else { $len += 1; }
		}
		die "$f:$line: cannot parse the format \"$fmt\"\n" if (pos($text) // 0) != length $text;
		$n++;
		my $over = $len > $limit;
		$bad++ if $over;
		print "$f:$line: $len: $fmt\n" if !$check || $over;
	}
}
die "extack-len: no formatted messages found: the extractor is broken\n" unless $n;
if ($check) {
	if ($bad) {
		print STDERR "extack-len: $bad of $n formatted extack messages can exceed $limit bytes with the longest names\n";
		exit 1;
	}
	print "extack-len: ok: all $n formatted extack messages fit in $limit bytes\n";
}
