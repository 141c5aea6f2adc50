#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# docs-messages.pl DOC... -- SRC.c...: every message that a document quotes
# (a line "redlock-cli: ..." of the man page, or of a code block in
# Markdown) must be one that the sources can print.  Prints each one that
# is not, and exits 1 if there is one.  Used by tests/docs.bats.
#
# A message is covered when it is one token (a value: a key, a URL, a
# duration), text that is not ours (a reply of Redis, a reason of OpenSSL,
# strerror(3)), or a format string of src/*.c whose fixed text matches and
# whose %s parts are covered in turn: "cannot connect to %s: %s" covers
# "cannot connect to rediss://h:6380: certificate verification failed:
# hostname mismatch" through "certificate verification failed: %s".
use strict;
use warnings;

my (@docs, @srcs);
my $list = \@docs;
for (@ARGV) {
	if ($_ eq '--') { $list = \@srcs; next; }
	push @$list, $_;
}
local $/;
my $src = '';
for my $f (@srcs) {
	open(my $h, '<', $f) or die "$f: $!";
	$src .= <$h>;
}
# Comments and character literals out, so that every '"' left pairs up.
$src =~ s{/\*.*?\*/}{ }gs;
$src =~ s/'(?:\\.|[^'\\\n])'/0/g;
# #define NAME "lit" "lit" (with line continuations): string macros
$src =~ s/\\\n//g;
my %macro;
while ($src =~ /^#define\s+(\w+)\s+((?:"(?:[^"\\]|\\.)*"\s*)+)$/mg) {
	my ($n, $v) = ($1, $2);
	$v =~ s/\s+$//;
	$v =~ s/"\s*"//g;
	$v =~ s/^"|"$//g;
	$macro{$n} = $v;
}
for my $n (keys %macro) { $src =~ s/"\s*\b$n\b\s*"/$macro{$n}/g; }
# adjacent literals, on one line or several
$src =~ s/"\s+"//g;
my @formats;
while ($src =~ /"((?:[^"\\\n]|\\.)*)"/g) {
	my $f = $1;
	$f =~ s/\\n$//; $f =~ s/\\"/"/g; $f =~ s/\\\\/\\/g;
	(my $fixed = $f) =~ s/%[-+ #0]*[0-9*]*(?:\.[0-9*]+)?(?:hh|h|ll|l|z|j|t)?[diouxXscfg%]//g;
	# "%s" or "%s %s" alone would cover any text
	next unless $fixed =~ /[^\s]/;
	push @formats, $f;
}
my %seen;
@formats = grep { !$seen{$_}++ } @formats;
# Each format as a list: fixed text, and holes ('%s' anything, '%d' digits).
my @fmts;
FORMAT: for my $f (@formats) {
	my @p;
	my $s = $f;
	while (length $s) {
		if ($s =~ s/^%%//) { push @p, '%'; }
		elsif ($s =~ s/^%[-+ #0]*[0-9*]*(?:\.[0-9*]+)?(?:hh|h|ll|l|z|j|t)?([diouxXscfg])//) {
			my $c = $1;
			my $hole = $c =~ /[diuxXfg]/ ? \'n' : \'s';
			next FORMAT if @p && ref $p[-1];        # "%s%s": no edge
			push @p, $hole;
		} else {
			$s =~ s/^(.)//s;
			if (@p && !ref $p[-1]) {
				$p[-1] .= $1;
			} else {
				push @p, $1;
			}
		}
	}
	push @fmts, \@p;
}
# Text that is not ours: Redis's replies, OpenSSL's reasons, strerror(3).
my @external = (
    qr/^(NOPERM|ERR|WRONGPASS|NOAUTH|READONLY|LOADING|BUSY) /,
    qr/^error:[0-9A-F]{8}:/,
    qr/^(hostname mismatch|self-signed certificate in certificate chain)$/,
    qr/^(certificate has expired|Connection refused)$/,
    qr/^(No such file or directory|Permission denied)$/);
my %memo;
sub covered;
# fits(pieces, i, text, pos): pieces[i..] match text[pos..] to its end
sub fits {
	my ($p, $i, $t, $pos) = @_;
	return $pos == length($t) if $i == @$p;
	my $x = $p->[$i];
	if (!ref $x) {
		return 0 if substr($t, $pos, length $x) ne $x;
		return fits($p, $i + 1, $t, $pos + length $x);
	}
	# a hole: up to the end, or to an occurrence of the next fixed text
	if ($i + 1 == @$p) {
		my $cap = substr($t, $pos);
		return length($cap) && hole_ok($$x, $cap);
	}
	my $next = $p->[$i + 1];
	my $at = $pos;
	while (($at = index($t, $next, $at + 1)) >= 0) {
		my $cap = substr($t, $pos, $at - $pos);
		if (length $cap && hole_ok($$x, $cap) && fits($p, $i + 1, $t, $at)) {
			return 1;
		}
	}
	return 0;
}
sub hole_ok {
	my ($kind, $cap) = @_;
	return $cap =~ /^-?[0-9a-fA-F.]+$/ if $kind eq 'n';
	return covered($cap);
}
# covered(text): a value (no blank), text not ours, or a format of src
# whose holes are covered in turn
sub covered {
	my ($t) = @_;
	return 1 if $t !~ / /;
	return $memo{$t} if exists $memo{$t};
	$memo{$t} = 0;
	for my $x (@external) { return $memo{$t} = 1 if $t =~ $x; }
	for my $p (@fmts) {
		next if grep { !ref $_ && index($t, $_) < 0 } @$p;
		return $memo{$t} = 1 if fits($p, 0, $t, 0);
	}
	return 0;
}
my $bad = 0;
for my $doc (@docs) {
	open(my $h, '<', $doc) or die "$doc: $!";
	my $text = <$h>;
	my $is_man = $doc =~ /\.[1-9]$/;
	for my $line (split /\n/, $text) {
		my $msg;
		if ($is_man) {
			next unless $line =~ /^redlock-cli: (.*)$/;
			$msg = $1;
			$msg =~ s/\\-/-/g;
			$msg =~ s/\\e/\\/g;
			$msg =~ s/\\&//g;
		} else {
			next unless $line =~ /^(?:    |\t)\s*redlock-cli: (.*)$/;
			$msg = $1;
		}
		next if covered($msg);
		print "$doc: $msg\n";
		$bad++;
	}
}
exit($bad ? 1 : 0);
