/** Thrown to make BullMQ try the step again later (e.g. a GPU not idle yet). */
export class RetryLater extends Error {}
