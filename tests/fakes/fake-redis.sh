#!/bin/bash
# SPDX-License-Identifier: MIT
# A deliberately broken Redis server for the protocol-error tests.
#
#   fake-redis.sh serve MODE SOCKET   listen on a unix socket (socat, one
#                                     process per connection); runs until
#                                     killed
#   fake-redis.sh handle MODE         one connection on stdin/stdout
#
# Modes, applied to every command the client sends:
#   garbage   reply "hello\r\n" (not RESP)
#   status    reply "+OK\r\n" (a valid reply of the wrong type)
#   close     read the command, then close without replying
#   hangup    close at once, before reading anything
#   stall     read the commands, never reply; exit when the client goes
#
# The handler reads each RESP request in full (array of bulk strings)
# before acting, so that "close" is a clean EOF for the client and not a
# reset caused by unread data.

set -u
export LC_ALL=C

# read_request: consume one "*N\r\n" ($len\r\n bytes\r\n)*N request.
# Returns 1 at EOF.
read_request() {
	local line n len i chunk
	IFS= read -r line || return 1
	line=${line%$'\r'}
	case $line in
	'*'*) n=${line#\*} ;;
	*) return 0 ;;	# inline command: one line
	esac
	for ((i = 0; i < n; i++)); do
		IFS= read -r line || return 1
		line=${line%$'\r'}
		len=${line#\$}
		# shellcheck disable=SC2034  # the bytes are not needed
		IFS= read -r -N $((len + 2)) chunk || return 1
	done
	return 0
}

handle() {
	local mode=$1
	case $mode in
	hangup)
		exit 0 ;;
	esac
	while read_request; do
		case $mode in
		garbage) printf 'hello\r\n' ;;
		status) printf '+OK\r\n' ;;
		close) exit 0 ;;
		stall) : ;;
		*) echo "fake-redis: unknown mode '$mode'" >&2; exit 2 ;;
		esac
	done
}

case ${1-} in
serve)
	[ $# -eq 3 ] || { echo "usage: $0 serve MODE SOCKET" >&2; exit 2; }
	rm -f "$3"
	exec socat UNIX-LISTEN:"$3",fork,unlink-early \
	    EXEC:"$0 handle $2"
	;;
handle)
	handle "$2"
	;;
*)
	echo "usage: $0 serve MODE SOCKET | handle MODE" >&2
	exit 2
	;;
esac
