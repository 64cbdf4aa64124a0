package helperclient

import processesv1 "github.com/s-code-dev/s-code/proto/scode/processes/v1"

// Processes returns the client of the user helper's Processes service (host processes) on
// the same authenticated connection.
func (c *Client) Processes() processesv1.ProcessesClient {
	return processesv1.NewProcessesClient(c.conn)
}
