#!/usr/bin/env bash
# A real one-node Slurm cluster on this machine, for CI and the scheduler tests (issue 41):
# Debian's slurm-wlm (Slurm 22.05) and munge, with slurmctld and slurmd run by hand as root (CI
# machines have no systemd as init), configured by a slurm.conf of our own in a state folder.
#
#   eval "$(.ci/slurm.sh start)"   install if needed, start, wait for the node; prints `export SLURM_CONF=...`
#   .ci/slurm.sh stop              stop the slurmctld, slurmd (and munged) that this script started
#   .ci/slurm.sh status            exit 0 when the cluster answers sinfo, 1 otherwise
#
# Measured on this project's 2-core machine (Debian bookworm, Slurm 22.05.8, a CI run beside it):
# start with nothing installed 11.2 s (apt-get installs 9 packages, 3.7 MB, no apt-get update
# needed); with the packages installed and no daemon running 0.25-0.8 s until the node is idle;
# a second start while running 0.06-0.09 s. A job array's tasks start within ~3 s of sbatch.
#
# start is idempotent: when the daemons of this config run, it only prints the export line. It
# always starts slurmctld with -c (clean state): after a stop/start, old jobs and node states are
# forgotten (job ids still go on from where they were). One cluster per machine: the daemons
# listen on Slurm's default ports 6817 and 6818. stop also stops munged when this script started
# it (a munged that was already running is left alone), so nothing of ours outlives the cluster.
# What tests see (measured): a requeued task is PENDING (Reason None, then BeginTime) for ~12 s,
# then reruns with Restarts=1 and its output file truncated; an array task cancelled before it
# ever started vanishes (squeue -t all omits it, scontrol says "not found"), while one cancelled
# while running stays CANCELLED with ExitCode=0:15. There is no accounting: no sacct.
# Settings (environment): TRAPARENA_SLURM_HOME (/var/tmp/traparena-slurm: config, state, spool,
# logs, PID files). Everything but the export line goes to stderr.
set -euo pipefail

DIR=${TRAPARENA_SLURM_HOME:-/var/tmp/traparena-slurm}
CONF=$DIR/slurm.conf
HOST=$(hostname -s)   # slurmd finds its NodeName by `hostname -s`, so the config must use the same
export SLURM_CONF=$CONF

say() { echo "slurm.sh: $*" >&2; }
die() { say "$*"; exit 1; }

# The PID in $DIR/$1.pid when that process still runs and is a $1 (PIDs get reused).
pid_of() {
  local pid
  pid=$(cat "$DIR/$1.pid" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ && $(cat "/proc/$pid/comm" 2>/dev/null) == "$1" ]] && echo "$pid"
}

install_packages() {
  command -v sbatch >/dev/null && command -v slurmctld >/dev/null &&
    command -v slurmd >/dev/null && command -v munged >/dev/null && return 0
  say "installing slurm-wlm and munge"
  local apt=(apt-get install -y --no-install-recommends slurm-wlm munge)
  # The package lists are usually fresh enough; update only when the install needs it.
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" >&2 ||
    { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive "${apt[@]}" >&2; } ||
    die "apt-get could not install slurm-wlm and munge"
}

start_munged() {
  # munged refuses a key that others can read, and runs as user munge (the package made it).
  if [[ ! -s /etc/munge/munge.key ]]; then
    say "creating /etc/munge/munge.key"
    install -d -o munge -g munge -m 700 /etc/munge
    head -c 1024 /dev/urandom >/etc/munge/munge.key
  fi
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
  # /run is fresh on each boot and the package's init script, which would make these, never ran.
  install -d -o munge -g munge -m 755 /run/munge
  install -d -o munge -g munge -m 700 /var/lib/munge /var/log/munge
  munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return 0   # one is already answering
  say "starting munged"
  runuser -u munge -- munged 9>&-   # not our lock: a daemon holding it would block every later start
  cp /run/munge/munged.pid "$DIR/munged.pid"   # only a munged started here is stopped by stop
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return 0; sleep 0.1; done
  die "munged does not answer (see /var/log/munge/munged.log)"
}

write_config() {
  local cpus mem
  cpus=$(nproc)
  # A node that reports less memory than configured is drained, so ask for 95% of what free sees.
  mem=$(free -m | awk '/^Mem:/ { print int($2 * 0.95) }')
  mkdir -p "$DIR/state" "$DIR/spool"
  cat >"$CONF.new" <<EOF
# Written by .ci/slurm.sh: a one-node cluster on $HOST.
ClusterName=traparena
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
# No mail here: the default MailProg is missing and slurmctld logs an error for it.
MailProg=/bin/true
# The cgroup plugins need a cgroup tree set up for Slurm; linuxproc tracks a job by parent PIDs.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
# A node that was down (daemons restarted) comes back by itself when its slurmd registers.
ReturnToService=2
# Finished jobs stay visible to squeue -t all and scontrol show job for an hour.
MinJobAge=3600
SlurmctldTimeout=30
SlurmdTimeout=60
# scancel: SIGTERM, then SIGKILL 5 s later (the default 30 s slows the tests).
KillWait=5
# Batch jobs may be requeued (sbatch --requeue, scontrol requeue).
JobRequeue=1
# A requeued job waits cred_expire + 1 s before it may run again (default 120 s: too long for tests);
# it is also a launch credential's lifetime, and 10 s is ample for a launch on one machine.
AuthInfo=cred_expire=10
# Trust the CPUs and memory written here rather than drain the node over what slurmd detects.
SlurmdParameters=config_overrides
NodeName=$HOST CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$CONF.new" "$CONF"
}

node_state() { timeout 10 sinfo -h -n "$HOST" -o %T 2>/dev/null | head -n1 || true; }

start() {
  mkdir -p "$DIR"
  exec 9>"$DIR/lock"; flock 9   # two starts at once would start two slurmctlds
  if pid_of slurmctld >/dev/null && pid_of slurmd >/dev/null && [[ $(node_state) =~ ^(idle|mixed|allocated|completing)$ ]]; then
    echo "export SLURM_CONF=$CONF"; return 0
  fi
  install_packages
  start_munged
  if ! pid_of slurmctld >/dev/null; then
    write_config
    say "starting slurmctld and slurmd ($CONF)"
    slurmctld -c 9>&- || die "slurmctld did not start: $(tail -n 3 "$DIR/slurmctld.log" 2>/dev/null)"
  fi
  pid_of slurmd >/dev/null || slurmd 9>&- || die "slurmd did not start: $(tail -n 3 "$DIR/slurmd.log" 2>/dev/null)"
  local state="" end=$((SECONDS + 60))
  while ((SECONDS < end)); do
    state=$(node_state)
    case $state in
      # Exactly these: a suffix such as idle* means slurmctld has not heard from slurmd yet.
      idle | mixed | allocated | completing) echo "export SLURM_CONF=$CONF"; return 0 ;;
      # A drained node stays so until told (ReturnToService covers only "down").
      drain* | down*) scontrol update nodename="$HOST" state=resume 2>/dev/null || true ;;
    esac
    sleep 0.5
  done
  die "node $HOST is '${state:-not answering}' after 60 s; see $DIR/slurmctld.log and $DIR/slurmd.log"
}

stop_one() {
  local pid
  pid=$(pid_of "$1") || return 0
  say "stopping $1 ($pid)"
  kill "$pid" 2>/dev/null || return 0   # it may have just exited
  for _ in $(seq 100); do [[ -d /proc/$pid ]] || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true   # 10 s is plenty: a slow exit must not hang CI
}

stop() {
  stop_one slurmd
  stop_one slurmctld
  stop_one munged
  rm -f "$DIR/munged.pid"
}

case ${1:-start} in
  start) start ;;
  stop) stop ;;
  status) if [[ -f $CONF ]] && timeout 10 sinfo -h >/dev/null 2>&1; then exit 0; else exit 1; fi ;;
  *) die "usage: $0 start|stop|status" ;;
esac
