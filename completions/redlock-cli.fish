# SPDX-License-Identifier: MIT
# fish completion for redlock-cli(1); mirrors completions/redlock-cli.bash

set -l verbs acquire release extend run status list history help

# true once "--" has been typed after run: the rest is the command to run
function __redlock_cli_after_dashdash
    set -l tokens (commandline -opc)
    set -l seen_run 0
    for t in $tokens[2..-1]
        if test "$t" = run
            set seen_run 1
        else if test $seen_run = 1; and test "$t" = --
            return 0
        end
    end
    return 1
end

# true if one of the given verbs was typed and run's "--" was not
function __redlock_cli_using
    __fish_seen_subcommand_from $argv; and not __redlock_cli_after_dashdash
end

# complete the command after run's "--" as fish would on its own
function __redlock_cli_complete_command
    set -l tokens (commandline -opc)
    set -l i (contains -i -- -- $tokens)
    set -l rest $tokens[(math $i + 1)..-1]
    __fish_complete_subcommand --commandline $rest (commandline -ct)
end

complete -c redlock-cli -f

# verbs
complete -c redlock-cli -n "not __fish_seen_subcommand_from $verbs" -a acquire -d 'Take a lock, print its token'
complete -c redlock-cli -n "not __fish_seen_subcommand_from $verbs" -a release -d 'Release a lock held with a token'
complete -c redlock-cli -n "not __fish_seen_subcommand_from $verbs" -a extend -d 'Extend a lock held with a token'
complete -c redlock-cli -n "not __fish_seen_subcommand_from $verbs" -a run -d 'Run a command while holding a lock'
complete -c redlock-cli -n "not __fish_seen_subcommand_from $verbs" -a status -d 'Show who holds a lock'
complete -c redlock-cli -n "not __fish_seen_subcommand_from $verbs" -a list -d 'Show every held lock'
complete -c redlock-cli -n "not __fish_seen_subcommand_from $verbs" -a history -d 'Show how the last runs of a lock ended'
complete -c redlock-cli -n "not __fish_seen_subcommand_from $verbs" -a help -d 'Show the usage of a command'
complete -c redlock-cli -n '__fish_seen_subcommand_from help' -a 'acquire release extend run status list history'

# global options, before or after the verb
set -l g 'not __redlock_cli_after_dashdash'
complete -c redlock-cli -n $g -s u -l url -x -a 'redis:// rediss:// unix:// redis-sentinel:// redis+cluster://' -d 'Redis server URL (repeat for a quorum)'
complete -c redlock-cli -n $g -l user -x -d 'Redis ACL user'
complete -c redlock-cli -n $g -l password-file -r -F -d 'Read the Redis password from a file'
complete -c redlock-cli -n $g -l no-auth-warning -d 'No warning for a password on the command line'
complete -c redlock-cli -n $g -l connect-timeout -x -d 'Connect timeout (duration)'
complete -c redlock-cli -n $g -l io-timeout -x -d 'Timeout per Redis command (duration)'
complete -c redlock-cli -n $g -l wait-replicas -x -d 'WAIT for this many replicas'
complete -c redlock-cli -n $g -l wait-timeout -x -d 'How long WAIT may take (duration)'
complete -c redlock-cli -n $g -l history-size -x -d 'Keep this many entries of each lock'"'"'s history'
complete -c redlock-cli -n $g -l tls -d 'Use TLS for every connection'
complete -c redlock-cli -n $g -l cacert -r -F -d 'Trust the CA certificates in this file'
complete -c redlock-cli -n $g -l cacertdir -x -a '(__fish_complete_directories (commandline -ct))' -d 'Trust the CA certificates in this directory'
complete -c redlock-cli -n $g -l cert -r -F -d 'Client certificate file'
complete -c redlock-cli -n $g -l key -r -F -d 'Private key of the client certificate'
complete -c redlock-cli -n $g -l sni -x -a '(__fish_print_hostnames)' -d 'TLS server name to send and verify'
complete -c redlock-cli -n $g -l insecure -d 'Do not verify the server certificate'
complete -c redlock-cli -n $g -l prefix -x -d 'Prefix for every key'
complete -c redlock-cli -n $g -s q -l quiet -d 'Print only errors'
complete -c redlock-cli -n $g -s v -l verbose -d 'Say more (repeatable)'
complete -c redlock-cli -n $g -l syslog -d 'Log to syslog too'
complete -c redlock-cli -n $g -s h -l help -d 'Print usage'
complete -c redlock-cli -n $g -s V -l version -d 'Print version'

# acquire and run
complete -c redlock-cli -n '__redlock_cli_using acquire extend run' -s t -l ttl -x -d 'Time to live (duration)'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -s n -l nonblock -d 'Fail at once if the lock is held'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -l nb -d 'Fail at once if the lock is held (flock)'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -l nonblocking -d 'Fail at once if the lock is held (flock)'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -s w -l wait -x -d 'Give up after this long (duration)'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -l timeout -x -d 'Same as --wait'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -s E -l conflict-exit-code -x -d 'Exit code when the lock is busy'
complete -c redlock-cli -n '__redlock_cli_using acquire release extend' -l token -x -d 'The lock token'
complete -c redlock-cli -n '__redlock_cli_using acquire release extend run status' -l limit -x -d 'Semaphore with this many slots'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -l fair -d 'Take the lock in arrival order'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -l queue -x -a 'any fifo latest' -d 'How waiters queue'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -l order -x -d 'Rank waiters by this number'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -l cancel-running -d 'Stop the running holder (=GRACE)'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -l record-command -x -a 'full name none' -d 'What status shows of the command line'
complete -c redlock-cli -n '__redlock_cli_using acquire status list history' -l json -d 'Print JSON'
complete -c redlock-cli -n '__redlock_cli_using history' -s n -l count -x -d 'Show this many entries'
complete -c redlock-cli -n '__redlock_cli_using list' -l all -d 'Free names with a history too'
complete -c redlock-cli -n '__redlock_cli_using release' -l force -d 'Remove whoever holds the lock'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -s s -l shared -d 'A shared hold, beside other shared ones'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -s x -l exclusive -d 'An exclusive hold (the default)'
complete -c redlock-cli -n '__redlock_cli_using acquire run' -s e -d 'An exclusive hold (flock -e)'

# run
complete -c redlock-cli -n '__redlock_cli_using run' -l renew -x -d 'Renew this often (duration)'
complete -c redlock-cli -n '__redlock_cli_using run' -l lost-signal -x -a 'TERM INT HUP QUIT KILL USR1 USR2 ALRM CONT STOP TSTP WINCH PIPE' -d 'Signal for a lost lock'
complete -c redlock-cli -n '__redlock_cli_using run' -l kill-after -x -d 'SIGKILL this long after the lost signal'
complete -c redlock-cli -n '__redlock_cli_using run' -l lost-exit-code -x -d 'Exit code for a lost lock'
complete -c redlock-cli -n '__redlock_cli_using run' -l release-on-exit -d 'Release when the command exits, not its leftovers'
complete -c redlock-cli -n '__redlock_cli_using run' -s o -l close -d 'Release when the command exits (flock -o)'
complete -c redlock-cli -n '__redlock_cli_using run' -l jitter -x -d 'Sleep up to this long first (duration)'
complete -c redlock-cli -n '__redlock_cli_using run' -l min-hold -x -d 'Hold the lock at least this long (duration)'
complete -c redlock-cli -n '__redlock_cli_using run' -s c -l command -x -d 'Run a shell command'
complete -c redlock-cli -n '__redlock_cli_using run' -l skip-outdated -d 'Skip if an order as high already ran'
complete -c redlock-cli -n '__redlock_cli_using run' -l superseded-exit-code -x -d 'Exit code when superseded'
complete -c redlock-cli -n '__redlock_cli_using run' -l outdated-exit-code -x -d 'Exit code when outdated'
complete -c redlock-cli -n '__redlock_cli_using run' -l cancelled-exit-code -x -d 'Exit code when cancelled'
complete -c redlock-cli -n '__redlock_cli_using run' -l metrics-file -r -F -d 'Write Prometheus metrics of the run to this file'

# after run's "--"
complete -c redlock-cli -n __redlock_cli_after_dashdash -x -a '(__redlock_cli_complete_command)'
