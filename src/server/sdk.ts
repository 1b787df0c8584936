/**
 * `switchyard/sdk`: the client side of multi-service mode (a central server driving many
 * services). Not part of this version yet; the entry point exists so the package layout is
 * stable, and it exports nothing rather than something that does not work.
 */
export {}
