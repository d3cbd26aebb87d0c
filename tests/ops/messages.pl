#!/usr/bin/perl
# List the user-facing error messages in C sources, one per line, as
# "file:line<TAB>format".  A message is the format string of:
#  - a call to any printf-like function (one declared with
#    __attribute__((format(printf, N, M)))) or fprintf(stderr, ...); where
#    the function has a "level" parameter, only calls at warning level or
#    above (a level naming ERR, WARN, CRIT, ALERT or EMERG);
#  - snprintf into an error buffer (one named *err*, *msg* or *why*);
#  - the log_err/log_warn macros;
#  - an assignment "why = ..." (the reason text parse helpers hand back).
# Formats with fewer than two words of fixed text ("%s: %s") say nothing
# by themselves and are left out.
# Usage: messages.pl FILE.c... (headers are read for declarations too).
use strict;
use warnings;

my %src;
for my $f (@ARGV) {
	open(my $fh, '<', $f) or die "messages.pl: cannot read $f: $!\n";
	local $/;
	$src{$f} = <$fh>;
	close($fh);
}

# Blank out comments, keeping strings and line numbers.
sub strip_comments {
	my ($t) = @_;
	$t =~ s{("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(/\*.*?\*/)|(//[^\n]*)}{
		defined $1 ? $1 : defined $2 ? ($2 =~ tr/\n//cdr) : ''
	}gse;
	return $t;
}
$src{$_} = strip_comments($src{$_}) for keys %src;

# Printf-like functions: name => [format index, level index or -1].
# Static ones count only in their own file.
my (%global, %local);
for my $f (keys %src) {
	my $t = $src{$f};
	while ($t =~ /__attribute__\s*\(\(\s*format\s*\(\s*printf\s*,\s*(\d+)\s*,\s*\d+\s*\)\s*\)\)/g) {
		my ($n, $end) = ($1, pos($t));
		my $start = $-[0];
		# The declaration around the attribute: from the end of the
		# previous statement or block to the next ';' or '{'.
		my $before = substr($t, 0, $start);
		$before =~ s/.*[;}]//s;
		$before =~ s/.*\n#[^\n]*//s;
		my $after = substr($t, $end);
		$after =~ s/[;{].*//s;
		my $decl = "$before $after";
		next unless $decl =~ /(\w+)\s*\(([^()]*)\)/;
		my ($name, $params) = ($1, $2);
		my @p = split /,/, $params;
		my $lvl = -1;
		for my $i (0 .. $#p) {
			$lvl = $i if $p[$i] =~ /\blevel\s*$/;
		}
		my $entry = [ $n - 1, $lvl ];
		if ($decl =~ /\bstatic\b/) {
			$local{$f}{$name} = $entry;
		} else {
			$global{$name} = $entry;
		}
	}
}
$global{log_err} = [ 0, -1 ];
$global{log_warn} = [ 0, -1 ];
$global{IMEXD_LOG_AT} = [ 2, 0 ];
$global{log_domain} = [ 4, 0 ];

# Split the argument list that starts at $pos (just after '(').
sub call_args {
	my ($t, $pos) = @_;
	my ($depth, $cur, @args) = (0, '');
	while ($pos < length($t)) {
		my $rest = substr($t, $pos);
		if ($rest =~ /^("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')/) {
			$cur .= $1;
			$pos += length($1);
			next;
		}
		my $c = substr($t, $pos++, 1);
		if ($c eq '(' || $c eq '[' || $c eq '{') {
			$depth++;
		} elsif ($c eq ')' || $c eq ']' || $c eq '}') {
			if ($depth == 0) {
				push @args, $cur;
				return @args;
			}
			$depth--;
		} elsif ($c eq ',' && $depth == 0) {
			push @args, $cur;
			$cur = '';
			next;
		}
		$cur .= $c;
	}
	return @args;
}

# The messages an argument holds: each top-level alternative of ?: that is
# made of string literals only (macros such as PRIu64 between them become
# a conversion).
sub literals {
	my ($arg) = @_;
	my @out;
	my @alts = ('');
	my $depth = 0;
	my $a = $arg;
	while (length $a) {
		if ($a =~ s/^("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')//) {
			$alts[-1] .= $1;
			next;
		}
		my $c = substr($a, 0, 1, '');
		$depth++ if $c eq '(';
		$depth-- if $c eq ')';
		if ($depth == 0 && ($c eq '?' || $c eq ':')) {
			push @alts, '';
		} else {
			$alts[-1] .= $c;
		}
	}
	for my $alt (@alts) {
		next unless $alt =~ /^\s*(?:"(?:\\.|[^"\\])*"|\s+|\b[A-Z][A-Za-z0-9_]*\b)+\s*$/
			&& $alt =~ /"/;
		my $s = '';
		while ($alt =~ /"((?:\\.|[^"\\])*)"|\b([A-Z][A-Za-z0-9_]*)\b/g) {
			# A macro between literals: PRIu64 after "%", or a text.
			$s .= defined $1 ? $1 : $s =~ /%$/ ? 'd' : '%s';
		}
		$s =~ s/\\n/ /g;
		$s =~ s/\\t/ /g;
		$s =~ s/\\(.)/$1/g;
		$s =~ s/\s+$//;
		push @out, $s;
	}
	return @out;
}

sub wordy {
	my ($s) = @_;
	(my $fixed = $s) =~ s/%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t)?[a-zA-Z%]//g;
	my @w = $fixed =~ /[A-Za-z]{2,}/g;
	return @w >= 2;
}

my %seen;
sub emit {
	my ($f, $t, $pos, $s) = @_;
	return unless wordy($s);
	my $line = 1 + (substr($t, 0, $pos) =~ tr/\n//);
	return if $seen{$s}++;
	print "$f:$line\t$s\n";
}

for my $f (sort keys %src) {
	next unless $f =~ /\.c$/;
	my $t = $src{$f};
	my %fn = (%global, %{ $local{$f} || {} });
	my $names = join('|', map { quotemeta } sort keys %fn);
	while ($t =~ /\b($names|fprintf|snprintf)\s*\(/g) {
		my ($name, $at) = ($1, $-[0]);
		my $save = pos($t);
		my @args = call_args($t, $save);
		pos($t) = $save;
		my ($fi, $li);
		if ($name eq 'fprintf') {
			next unless @args && $args[0] =~ /^\s*stderr\s*$/;
			($fi, $li) = (1, -1);
		} elsif ($name eq 'snprintf') {
			# Text built for an error message buffer.
			next unless @args && $args[0] =~ /\b\w*(?:err|msg|why)\w*\s*$/i;
			($fi, $li) = (2, -1);
		} else {
			($fi, $li) = @{ $fn{$name} };
		}
		next unless $fi < @args;
		if ($li >= 0) {
			my $lv = $args[$li] // '';
			next unless $lv =~ /ERR|WARN|CRIT|ALERT|EMERG/;
		}
		emit($f, $t, $at, $_) for literals($args[$fi]);
	}
	while ($t =~ /\bwhy\s*=\s*([^;]*);/g) {
		emit($f, $t, $-[0], $_) for literals($1);
	}
}
