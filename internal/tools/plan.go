package tools

import (
	"context"
	"fmt"
	"strings"
)

// Step statuses of update_plan.
const (
	StepPending    = "pending"
	StepInProgress = "in_progress"
	StepCompleted  = "completed"
)

// MaxPlanSteps is the most steps a plan holds.
const MaxPlanSteps = 100

// Step is one step of a plan.
type Step struct {
	Step   string `json:"step" jsonschema:"what the step does, one short sentence"`
	Status string `json:"status" jsonschema:"pending, in_progress or completed; at most one step in_progress"`
}

// Plan is the plan update_plan keeps for the session.
type Plan struct {
	Explanation string `json:"explanation,omitempty" jsonschema:"why the plan is as it is or changed (optional)"`
	Steps       []Step `json:"plan" jsonschema:"the whole plan, in order"`
}

// PlanResult is update_plan's answer: the plan the session now keeps.
type PlanResult struct {
	Plan
	Counts map[string]int `json:"counts"` // steps by status
}

func updatePlan(_ context.Context, env *Env, in Plan) (PlanResult, error) {
	if env.Session == nil {
		return PlanResult{}, &Error{Code: "no_session", Message: "this server keeps no session state"}
	}
	if len(in.Steps) > MaxPlanSteps {
		return PlanResult{}, &Error{Code: "invalid_plan", Message: fmt.Sprintf("%d steps: keep a plan to at most %d steps", len(in.Steps), MaxPlanSteps)}
	}
	counts := map[string]int{StepPending: 0, StepInProgress: 0, StepCompleted: 0}
	for i, s := range in.Steps {
		if strings.TrimSpace(s.Step) == "" {
			return PlanResult{}, &Error{Code: "invalid_plan", Message: fmt.Sprintf("plan[%d]: empty step: say what the step does", i)}
		}
		if _, ok := counts[s.Status]; !ok {
			return PlanResult{}, &Error{Code: "invalid_plan", Message: fmt.Sprintf("plan[%d]: status %q: use pending, in_progress or completed", i, s.Status)}
		}
		counts[s.Status]++
	}
	if counts[StepInProgress] > 1 {
		return PlanResult{}, &Error{Code: "invalid_plan", Message: fmt.Sprintf("%d steps are in_progress: mark at most one step in_progress (the one being worked on), the others pending or completed", counts[StepInProgress])}
	}
	if in.Steps == nil {
		in.Steps = []Step{}
	}
	env.Session.setPlan(in)
	return PlanResult{Plan: env.Session.Plan(), Counts: counts}, nil
}

var updatePlanTool = Must(Spec[Plan, PlanResult]{
	Name: "update_plan",
	Description: "Record the plan for this task: the whole list of steps, each pending, in_progress or completed, " +
		"with at most one in_progress, and an optional explanation. The server keeps the latest plan for the session and returns it. " +
		"Send the whole plan each time; update it as steps finish.",
	ReadOnly: true,
	Call:     updatePlan,
})
