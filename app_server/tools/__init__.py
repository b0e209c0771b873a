"""Tools the model can call: their specs, the unified exec sessions behind them, approvals, sandbox."""
