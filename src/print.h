/* SPDX-License-Identifier: MIT */
/*
 * What status, list and history print (status-print.c, history-print.c):
 * the verbs' words for a lock's state and its history, shared so that
 * each says the same in the same words.  history-print.c is below
 * status-print.c: a free lock's status ends with its last run.
 */

#ifndef PRINT_H
#define PRINT_H

struct lock_run;
struct lock_state;

/* status-print.c */
void	 status_print_json(const char *, int64_t, const struct lock_state *);
void	 status_print_text(const char *, int64_t, const struct lock_state *);
void	 status_print_token(const char *, char *, size_t);
void	 status_print_entry(const char *, int64_t, const struct lock_state *);

/* history-print.c */
void	 history_print_json(const struct lock_run *, size_t);
void	 history_print_text(const struct lock_run *, size_t);
void	 history_print_last(const struct lock_run *);
void	 history_print_run_json(const struct lock_run *);

#endif /* PRINT_H */
