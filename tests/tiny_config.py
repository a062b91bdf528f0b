"""The tiny training config the training tests share: a few seconds per run on 2 cores."""

TINY = {
    "num_envs": 32,
    "num_steps": 8,
    "total_steps": 1500,
    "hidden": [16],
    "minibatch_size": 256,
    "update_epochs": 1,
    "threads": 1,
    "pool": {"self_play": 0.5, "snapshots": 0.25, "agents": {"heuristic": 0.25}, "snapshot_every": 1},
    "eval": {"every": 600, "deals": 4, "final_deals": 4, "resamples": 20},
}
