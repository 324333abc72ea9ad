"""What the run store decides without I/O: the statements that store a run (writes), a run
restored from its rows (restore), the checks of a head (checks), the rows tools read
(rows), the store's own schema (schema), runs of other spec versions (versions), what a
driver's failure means to a caller (failures), and what a backend gives (statements)."""
