// AuthScenarios module.
