"""rods: Reward-driven Online Data Synthesis for RL of multi-turn tool-use agents."""

__version__ = "0.1.0"
