"""Training: masked PPO on the batched engine (ppo.py), configs, checkpoints, the SB3 route and benchmarks."""
