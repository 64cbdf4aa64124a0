// Package codemode runs Code Mode programs: JavaScript (on goja) that calls the read-only
// tools it is handed as synchronous functions, within budgets, logging every child call.
package codemode
