// GoTrue module.
