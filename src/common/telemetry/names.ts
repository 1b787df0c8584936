/** The name of switchyard's OpenTelemetry meter and tracer. */
export const INSTRUMENTATION_NAME = 'switchyard'
