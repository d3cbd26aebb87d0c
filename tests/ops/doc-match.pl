#!/usr/bin/perl
# Read "file:line<TAB>format" lines (messages.pl) on stdin; print those whose
# text no code span (`...`) of the given Markdown files holds.  A printf
# conversion matches any text (the docs write <name>, <N>, ...); a span
# that ends in "..." documents every message that starts with its text.
# Exit status: 0 all documented, 1 some missing.
# Usage: messages.pl ... | doc-match.pl DOC.md...
use strict;
use warnings;

my (@spans, @cut);
for my $f (@ARGV) {
	open(my $fh, '<', $f) or die "doc-match.pl: cannot read $f: $!\n";
	local $/;
	my $t = <$fh>;
	close($fh);
	$t =~ s/^```.*?^```//gms;	# fenced blocks are examples, not entries
	while ($t =~ /(`+)(.+?)\1/gs) {
		my $s = $2;
		$s =~ s/\\\|/|/g;
		$s =~ s/\s+/ /g;
		$s =~ s/^ | $//g;
		push @spans, $s;
		push @cut, $1 if $s =~ /^(.*?)\s*(?:\.\.\.|\x{2026})$/s && length($1) >= 8;
	}
}
my $all = join("\n", @spans);

my $conv = qr/%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t)?[a-zA-Z]/;

# The message as a list of pieces: fixed text, or undef for a conversion.
sub pieces {
	my ($m) = @_;
	my @p;
	for my $part (split /($conv|%%)/, $m) {
		next if $part eq '';
		if ($part eq '%%') {
			push @p, '%';
		} elsif ($part =~ /^$conv$/) {
			push @p, undef;
		} else {
			push @p, $part;
		}
	}
	return @p;
}

sub regex_of {
	my $re = '';
	for my $p (@_) {
		if (!defined $p) {
			$re .= '[^\n]*?';
		} else {
			$re .= join('\s+', map { quotemeta } split(/\s+/, $p, -1));
		}
	}
	return $re;
}

my $missing = 0;
while (my $l = <STDIN>) {
	chomp $l;
	my ($where, $m) = split /\t/, $l, 2;
	my @p = pieces($m);
	my $re = regex_of(@p);
	next if $all =~ /$re/;
	# A prefix of the message, cut anywhere in its fixed text, may be what
	# a span ending in "..." holds.
	my $ok = 0;
	CUT: for my $c (@cut) {
		for my $i (0 .. $#p) {
			next unless defined $p[$i];
			for my $k (1 .. length $p[$i]) {
				my $pre = regex_of(@p[0 .. $i - 1], substr($p[$i], 0, $k));
				if ($c =~ /^(?:imexctl[^:]*: )?$pre\s*$/) {
					$ok = 1;
					last CUT;
				}
			}
		}
	}
	next if $ok;
	print "$where: $m\n";
	$missing++;
}
exit($missing ? 1 : 0);
