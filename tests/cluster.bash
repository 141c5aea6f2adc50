# SPDX-License-Identifier: MIT
# Redis Cluster nodes for the tests that need a cluster (cluster.bats,
# list.bats, shared.bats): each node a cluster-enabled redis-server on a free port,
# its files in $CD/node-NAME; $NODES names them.

# node_start NAME: a cluster-enabled redis-server on a free port, its
# files in $CD/node-NAME.
node_start() {
	mkdir -p "$CD/node-$1"
	daemon_on_free_port "$CD/node-$1" node_launch "$CD/node-$1" ||
	    return 1
	# make test-acl: redlock-cli's least-privilege user on every node too.
	if [ "${REDLOCK_TEST_ACL:-0}" = 1 ]; then
		# shellcheck disable=SC2086 # the rules are words
		ncli "$1" ACL SETUSER locker $REDLOCK_ACL_RULES >/dev/null
		export REDLOCK_USER=locker REDLOCK_PASSWORD=lock-pw
	fi
}

# node_launch DIR PORT: one try of node_start.
node_launch() {
	rm -f "$1/nodes.conf"
	redis-server --port "$2" --bind 127.0.0.1 \
	    --cluster-enabled yes --cluster-config-file "$1/nodes.conf" \
	    --save '' --appendonly no --daemonize yes \
	    --pidfile "$1/pid" --dir "$1" --logfile "$1/log"
}

node_stop() { pidfile_stop "$CD/node-$1"; }

node_port() { cat "$CD/node-$1/port"; }
ncli() { pcli "$(node_port "$1")" "${@:2}"; }

# cluster_create: start the nodes of $NODES and make them one cluster,
# its slots spread over them, once every node says it is ok.
cluster_create() {
	local n seeds=()
	for n in $NODES; do
		node_start "$n" || return 1
		seeds+=("127.0.0.1:$(node_port "$n")")
	done
	redis-cli --cluster create "${seeds[@]}" --cluster-yes \
	    </dev/null >"$CD/create.log" 2>&1 3>&- || {
		cat "$CD/create.log" >&2
		return 1
	}
	WAIT_TRIES=400 wait_until cluster_ok || {
		echo "cluster did not reach cluster_state:ok" >&2
		return 1
	}
}

cluster_ok() {
	local n
	for n in $NODES; do
		ncli "$n" CLUSTER INFO 2>/dev/null | tr -d '\r' |
		    grep -qx 'cluster_state:ok' || return 1
	done
}

