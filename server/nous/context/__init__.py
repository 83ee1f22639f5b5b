"""Context assembly: what goes in front of the model, within a hard token budget."""
