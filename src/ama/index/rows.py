"""Column positions of the stats facts' request sums, shared by the extraction, the index
and the aggregation (kept free of heavy imports: the indexed ``ama stats`` loads only this)."""

COST_SCALE = 10**10  # cost is summed in integer units of 1e-10 USD

R_REQUESTS, R_INPUT, R_OUTPUT, R_CACHE_READ, R_CACHE_WRITE, R_COST, R_PRICED, R_ERRORS, R_RETRIES = range(9)
REQ_FIELDS = (
    "requests",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "cost_units",
    "priced",
    "errors",
    "retries",
)

#: the version of what the extraction stores; the index is rebuilt when it changes (bump it
#: with any change to what ``extract``/``facts``/``lines`` produce)
#: 2: catalog metadata (error count, pending interaction, task status); 3: external agent
#: usage; 4: errors counted in any JSON spacing; 5: strict stats shapes validate as the lenient
#: one, bounded counts and costs, strict timestamps; 6: the search table without column sizes
#: (remade by the rebuild, ``update.FTS_DDL``)
INDEX_FORMAT = "6"
