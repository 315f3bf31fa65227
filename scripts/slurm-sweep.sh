#!/usr/bin/env bash
# A Slurm job array running a coapcc sweep in 64 shards. Submit with `sbatch scripts/slurm-sweep.sh PLAN.toml`;
# when every task has finished: `coapcc merge --out results shards/* && coapcc report results`.
#SBATCH --job-name=coapcc-sweep
#SBATCH --array=1-64
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
set -euo pipefail
plan=${1:?usage: sbatch scripts/slurm-sweep.sh PLAN.toml}
n=${SLURM_ARRAY_TASK_COUNT:-64}
k=${SLURM_ARRAY_TASK_ID:?run under sbatch}
coapcc sweep "$plan" --out "shards/$k" --shard "$k/$n" --threads "${SLURM_CPUS_PER_TASK:-1}"
