"""Adapters from the trainer-agnostic engine to trainers: TRL (one machine), verl on Ray (many)."""
